// Session-time cross-check (issue 32 phase 1, 2026-11-26): PouchDB 2.2.3 (the bundle of PyPI's
// Python-PouchDB 0.4.1, docs/design/sync.md §0) against Tests/python/revision_tree_model.py, the
// model that RevisionTreeTests.differentialAgainstPythonModel compares KVDocs' RevisionTree with.
// Scenarios: pouchdb223_model_check_gen.py > scen.jsonl (300 random edit histories, complete
// `_revisions` paths, MD5 and short opaque ids, some deletions); run `node
// pouchdb223_model_check.js > pouch.out` beside the extracted bundle, then compare leaf sets,
// winner (and whether it is deleted) and `_conflicts` with the model's last state.
// Result: all 300 agree once the model orders ids as JavaScript strings; with Erlang's byte
// order (KVDocs, CouchDB) the winner differs in 12 scenarios, each a tie at the top position
// between a 32-hex id and an opaque one (design §1.3: KVDocs follows CouchDB there).
// Note: PouchDB 2.2.3's open_revs answer did not carry `_deleted` for deleted leaves here, so
// only the revision set of the leaves is compared.
global.window = global; global.self = global; global.navigator = {userAgent:'node'};
(0,eval)(require('fs').readFileSync('Python-PouchDB-0.4.1/pouchdb/bundle.js','utf8'));
const lines = require('fs').readFileSync('scen.jsonl','utf8').trim().split('\n');
(async()=>{
 let n=0;
 for (const line of lines) {
  const sc = JSON.parse(line);
  const db = new PouchDB('s'+(n++), {adapter:'memory'});
  for (const op of sc.ops) {
    const m = op.merge; const pos = m.start + m.ids.length - 1;
    const doc = {_id:'x', _rev: pos+'-'+m.ids[m.ids.length-1], _revisions:{start:pos, ids:[...m.ids].reverse()}, v:1};
    if (m.deleted) doc._deleted = true;
    await db.bulkDocs({docs:[doc], new_edits:false});
  }
  const leaves = (await db.get('x', {open_revs:'all'})).map(r => [r.ok._rev, !!r.ok._deleted]).sort();
  const all = await db.allDocs({keys:['x']});
  const w = all.rows[0].value;
  let conflicts = [];
  if (!w.deleted) conflicts = ((await db.get('x', {conflicts:true}))._conflicts || []).slice().sort();
  console.log(JSON.stringify({leaves, winner:w.rev, deleted: !!w.deleted, conflicts}));
 }
})().catch(e=>{console.log('ERR',e); process.exit(1)});
