// big.js — the node trace recorded with DWARF stacks: 8 Buffers of 8 MiB, each
// made by allocateBig (called from fillCache). Run as
//   node --perf-basic-prof --interpreted-frames-native-stack big.js MAPSDIR TRUTHDIR NAME
// Like jit.js it writes MAPSDIR/NAME.pid, then stops itself with SIGSTOP;
// record.sh copies /proc/PID/maps once every thread is stopped and kills it.
//
// Truth (TRUTHDIR/NAME.PID.tsv, as truth.h's format): JS cannot see a Buffer's
// address, so fillCache reads /proc/self/maps before and after each
// allocateBig and takes the pages that appeared as one run of 8 MiB + 4 KiB
// (node's allocator callocs the backing store; glibc serves it with one mmap
// of the size plus its chunk header, page-rounded).
'use strict';
const fs = require('fs');
const [mapsdir, truthdir, name] = process.argv.slice(2);
fs.writeFileSync(`${mapsdir}/${name}.pid`, String(process.pid));

const SIZE = 8 << 20;

function readMaps() {
  return fs.readFileSync('/proc/self/maps', 'latin1').trim().split('\n').map((l) => {
    const f = l.split(/\s+/);
    const [s, e] = f[0].split('-').map((x) => parseInt(x, 16));
    return [s, e, f[1].slice(0, 3)];
  });
}

// Runs of pages in `after` that are in no range of `before`.
function appeared(before, after) {
  const runs = [];
  for (const [s, e] of after) {
    let cuts = [[s, e]];
    for (const [bs, be] of before) {
      cuts = cuts.flatMap(([a, b]) => (be <= a || bs >= b) ? [[a, b]] :
        [...(a < bs ? [[a, bs]] : []), ...(b > be ? [[be, b]] : [])]);
    }
    runs.push(...cuts);
  }
  runs.sort((x, y) => x[0] - y[0]);
  const merged = [];
  for (const r of runs) {
    const last = merged[merged.length - 1];
    if (last && last[1] === r[0]) last[1] = r[1]; else merged.push([r[0], r[1]]);
  }
  return merged;
}

function allocateBig(i) {
  return Buffer.alloc(SIZE, i + 1);
}

const rows = [];
function fillCache(n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const before = readMaps();
    out.push(allocateBig(i));
    const runs = appeared(before, readMaps()).filter(([s, e]) => e - s === SIZE + 4096);
    if (runs.length !== 1) throw new Error(`allocateBig ${i}: ${JSON.stringify(runs)}`);
    rows.push(runs[0]);
  }
  return out;
}

const cache = fillCache(8);
// Some churn besides: JS arrays grow the V8 heap.
const arrays = [];
for (let i = 0; i < 10; i++) arrays.push(new Array(50000).fill(i));

const end = readMaps();
let text = 'start\tend\tprot\torigin\tcommit\tvia\twhat\n';
for (const [s, e] of rows) {
  const prots = new Set(end.filter(([a, b]) => a < e && b > s).map((r) => r[2]));
  if (prots.size !== 1) throw new Error(`prot of ${s.toString(16)}: ${[...prots]}`);
  text += `${s.toString(16)}\t${e.toString(16)}\t${[...prots][0]}\tallocateBig\t-\tlibc\t` +
      'Buffer.alloc(8 MiB) in allocateBig <- fillCache\n';
}
fs.writeFileSync(`${truthdir}/${name}.${process.pid}.tsv`, text);
if (cache.length + arrays.length === 0) console.log('unreachable');
process.kill(process.pid, 'SIGSTOP');
