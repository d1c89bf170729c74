// Run by run_interop.py (not by the unittest). BUNDLE = path of pouchdb/bundle.js from PyPI Python-PouchDB 0.4.1.
// PouchDB 2.2.3 (Python-PouchDB 0.4.1 bundle) <-> refpeer, both ways, with conflicts.
global.window = global; global.self = global; global.navigator = {userAgent:'node'};
global.XMLHttpRequest = require('/usr/share/nodejs/xmlhttprequest').XMLHttpRequest;
(0,eval)(require('fs').readFileSync(process.env.BUNDLE,'utf8'));
const remote = process.argv[2];
const db = new PouchDB('p', {adapter:'memory'});
async function state(d){
  const ch = await d.changes({style:'all_docs'});
  const out = {};
  for (const r of ch.results){
    const leaves = await d.get(r.id, {open_revs:'all'});
    let w;
    try { const doc = await d.get(r.id, {conflicts:true}); w = [doc._rev, (doc._conflicts||[]).sort()]; }
    catch(e){ w = ['deleted']; }
    out[r.id] = [w, leaves.map(x=>x.ok._rev).sort()];
  }
  return out;
}
(async()=>{
  for (let i=0;i<5;i++) await db.put({_id:'p'+i, v:i});
  const shared = await db.put({_id:'shared', v:'pouch'});
  const r1 = await PouchDB.replicate(db, remote, {});
  console.log('PUSH1', JSON.stringify({docs_read:r1.docs_read, docs_written:r1.docs_written}));
  await db.put({_id:'shared', v:'pouch2', _rev:shared.rev});
  process.stdout.write('READY\n');
  await new Promise(res=>process.stdin.once('data', res));   // refpeer side edits happen now
  const r2 = await PouchDB.replicate(remote, db, {});
  console.log('PULL1', JSON.stringify({docs_read:r2.docs_read, docs_written:r2.docs_written}));
  const r3 = await PouchDB.replicate(db, remote, {});
  console.log('PUSH2', JSON.stringify({docs_read:r3.docs_read, docs_written:r3.docs_written}));
  const r4 = await PouchDB.replicate(remote, db, {});
  const r5 = await PouchDB.replicate(db, remote, {});
  console.log('RERUN', JSON.stringify({pull_written:r4.docs_written, push_written:r5.docs_written}));
  console.log('STATE', JSON.stringify(await state(db)));
  process.exit(0);
})().catch(e=>{console.log('ERR', e && (e.stack||JSON.stringify(e))); process.exit(1);});
