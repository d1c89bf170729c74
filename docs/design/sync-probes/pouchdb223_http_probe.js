global.window = global; global.self = global; global.navigator = {userAgent:'node'};
global.XMLHttpRequest = require('/usr/share/nodejs/xmlhttprequest').XMLHttpRequest;
(0,eval)(require('fs').readFileSync('Python-PouchDB-0.4.1/pouchdb/bundle.js','utf8'));
const db = new PouchDB('a', {adapter:'memory'});
(async()=>{
 await db.put({_id:'doc1', v:1});
 const r = await PouchDB.replicate(db, 'http://127.0.0.1:'+process.argv[2]+'/db', {});
 console.log('PUSH', JSON.stringify(r));
 const r2 = await PouchDB.replicate('http://127.0.0.1:'+process.argv[2]+'/db', db, {});
 console.log('PULL', JSON.stringify(r2));
})().catch(e=>console.log('ERR',e));
