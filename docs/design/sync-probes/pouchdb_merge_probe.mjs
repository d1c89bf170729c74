import merge from './merge.mjs';
import winningRev from './winningRev.mjs';
const path = (pos, ids, deleted) => { let t=null; for (let i=0;i<ids.length;i++){ const n=[ids[i], i===0?{status:'available',deleted:!!deleted}:{status:'missing'}, t?[t]:[]]; t=n;} return {pos, ids:t}; };
let tree=[];
for (const p of [path(1,['aaa','root']), path(1,['bbb','ccc','root'],true), path(1,['abc','root'])]) { tree = merge(tree, p, 1000).tree; }
console.log(JSON.stringify(tree)); console.log(winningRev({rev_tree:tree}));
const r = merge(tree, path(1,['abc','root']), 2);
console.log('stem2', JSON.stringify(r.tree), r.stemmedRevs);
