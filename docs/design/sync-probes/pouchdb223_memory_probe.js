global.window = global; global.self = global; global.navigator = {userAgent:'node'};
(0,eval)(require('fs').readFileSync('Python-PouchDB-0.4.1/pouchdb/bundle.js','utf8'));
const db = new PouchDB('a', {adapter:'memory'});
(async()=>{
 await db.bulkDocs({docs:[
  {_id:'x', _rev:'2-aaa', _revisions:{start:2, ids:['aaa','root']}, v:1},
  {_id:'x', _rev:'3-bbb', _revisions:{start:3, ids:['bbb','ccc','root']}, _deleted:true},
  {_id:'x', _rev:'2-abc', _revisions:{start:2, ids:['abc','root']}, v:2}], new_edits:false});
 const d = await db.get('x', {conflicts:true, revs:true, open_revs:'all'});
 console.log(JSON.stringify(d));
 const w = await db.get('x', {conflicts:true});
 console.log(JSON.stringify(w));
 const ch = await db.changes({style:'all_docs', since:0});
 console.log(JSON.stringify(ch));
 const diff = await db.revsDiff({x:['2-abc','4-zzz']});
 console.log(JSON.stringify(diff));
})().catch(e=>console.log('ERR',e));
