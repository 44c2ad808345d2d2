// jit.js — the JIT-runtime trace: node --perf-basic-prof writes
// /tmp/perf-PID.map for the code V8 generates; this script allocates
// (Buffers, arrays, typed arrays), compiles and optimizes functions, lets the
// GC free some of it, then stops itself with SIGSTOP. record.sh waits until
// every thread is stopped, copies /proc/PID/maps (the end state: nothing runs
// after the snapshot), and SIGKILLs the process.
//
//   usage: node --perf-basic-prof jit.js OUTDIR NAME
'use strict';
const fs = require('fs');
const [outdir, name] = process.argv.slice(2);
// record.sh needs the pid before the process stops itself.
fs.writeFileSync(`${outdir}/${name}.pid`, String(process.pid));

// Large Buffers come from mmap (glibc's mmap threshold), small ones from the heap.
const buffers = [];
for (let i = 0; i < 8; i++) buffers.push(Buffer.alloc((i + 1) << 20, i));
const small = [];
for (let i = 0; i < 1000; i++) small.push(Buffer.alloc(256, i));

// JS arrays and typed arrays grow the V8 heap (new and old space pages).
const arrays = [];
for (let i = 0; i < 20; i++) arrays.push(new Array(50000).fill(i));
const f64 = new Float64Array(1 << 19).fill(1.5);

// Compiled code: many small functions, hot enough to be optimized.
let sum = 0;
for (let i = 0; i < 200; i++) {
  const f = new Function('x', `return x * ${i} + ${i % 7};`);
  for (let j = 0; j < 3000; j++) sum += f(j);
}

// Drop half of the memory and let the GC give some back.
buffers.length = 4;
arrays.length = 5;
for (let i = 0; i < 30; i++) new Array(100000).fill(i);

if (sum === 42) console.log(f64[0]);  // keep everything alive until here
process.kill(process.pid, 'SIGSTOP');
