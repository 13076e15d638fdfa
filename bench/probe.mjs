/**
 * Preloaded (`node --import`) into a benchmarked server's process, never into the product itself: SIGUSR2
 * opens a measurement window, the next SIGUSR2 closes it and writes `<n>.json` into PVAI_BENCH_PROBE_OUT with
 * what the process did inside it — CPU time, JS heap bytes allocated, GC pauses, event-loop delay — and, with
 * PVAI_BENCH_PROFILE=1, a V8 CPU profile of the window (`<n>.cpuprofile`) and a sampling heap profile of
 * what it allocated, garbage included (`<n>.heapprofile`).
 *
 * With PVAI_BENCH_SQL=1 it also times every call into SQLite (better-sqlite3's statements and `exec`) inside
 * the window, by statement: the report's `sql` lists each statement's calls and µs, so a miss's SQLite time can
 * be split by what it writes. The timing costs ~0.1 µs a call, so it is off unless asked for.
 *
 * Bytes allocated = heap used at the end − heap used at the start + what every GC in between freed
 * (v8.GCProfiler reports the heap before and after each one). It counts the JS heap only: Buffers' backing
 * stores live outside it, as they do for every Node server compared here.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { GCProfiler, getHeapStatistics } from 'node:v8';
import { isMainThread } from 'node:worker_threads';

const outDir = process.env.PVAI_BENCH_PROBE_OUT;
const profiling = process.env.PVAI_BENCH_PROFILE === '1' || process.env.PVAI_BENCH_PROFILE === 'retained';
/** `retained`: the heap profile keeps only what is still alive when the window closes (what outlives requests). */
const retainedOnly = process.env.PVAI_BENCH_PROFILE === 'retained';
let windowNumber = 0;
/** Per statement, while a window is open: [calls, nanoseconds]. */
const sqlTime = new Map();
let timingSql = false;

/** The statement a call ran, short: whitespace folded, a multi-row VALUES list as one tuple and `…`. */
function statementOf(sql) {
  return sql
    .replace(/\s+/g, ' ')
    .replace(/(\([^()]*\))(, \([^()]*\))+/g, '$1, …')
    .slice(0, 90);
}

/** Wraps better-sqlite3's calls (the copy the server resolves from this tree) to time them into sqlTime. */
function timeSqlite() {
  const Database = createRequire(import.meta.url)('better-sqlite3');
  const scratch = new Database(':memory:');
  const statement = Object.getPrototypeOf(scratch.prepare('SELECT 1'));
  scratch.close();
  const wrap = (proto, method, sqlOf) => {
    /** The key of each SQL text met, made once: the multi-row statements are kilobytes long. */
    const keys = new Map();
    const original = proto[method];
    proto[method] = function timed(...args) {
      if (!timingSql) return original.apply(this, args);
      const started = process.hrtime.bigint();
      try {
        return original.apply(this, args);
      } finally {
        const elapsed = process.hrtime.bigint() - started;
        const sql = sqlOf(this, args);
        let key = keys.get(sql);
        if (key === undefined) {
          key = `${method} ${statementOf(sql)}`;
          keys.set(sql, key);
        }
        const entry = sqlTime.get(key) ?? [0, 0n];
        entry[0] += 1;
        entry[1] += elapsed;
        sqlTime.set(key, entry);
      }
    };
  };
  for (const method of ['run', 'get', 'all']) wrap(statement, method, (stmt) => stmt.source);
  wrap(Database.prototype, 'exec', (_db, args) => String(args[0]));
}
if (process.env.PVAI_BENCH_SQL === '1' && isMainThread) timeSqlite();
/** @type {undefined | { gc: GCProfiler, heap: number, cpu: NodeJS.CpuUsage, started: number, delay: import('node:perf_hooks').IntervalHistogram, session?: Session }} */
let open;

async function begin() {
  const session = profiling ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    // 250 µs: a request costs ~100 µs of CPU here, so the default 1 ms interval sees too few samples per folder.
    await session.post('Profiler.setSamplingInterval', { interval: 250 });
    await session.post('Profiler.start');
    // Where the bytes are allocated, garbage included (a request's allocations are nearly all garbage).
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 4096,
      includeObjectsCollectedByMajorGC: !retainedOnly,
      includeObjectsCollectedByMinorGC: !retainedOnly,
    });
  }
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  sqlTime.clear();
  timingSql = process.env.PVAI_BENCH_SQL === '1';
  const gc = new GCProfiler();
  gc.start();
  open = {
    gc,
    heap: getHeapStatistics().used_heap_size,
    cpu: process.cpuUsage(),
    started: performance.now(),
    delay,
    session,
  };
}

async function end() {
  const window = open;
  if (!window) return;
  open = undefined;
  const heap = getHeapStatistics().used_heap_size;
  const cpu = process.cpuUsage(window.cpu);
  timingSql = false;
  const elapsedMs = performance.now() - window.started;
  window.delay.disable();
  const gc = window.gc.stop();
  let freed = 0;
  let gcMicros = 0;
  let scavenges = 0;
  let majors = 0;
  let longestGcMicros = 0;
  for (const event of gc?.statistics ?? []) {
    freed += event.beforeGC.heapStatistics.usedHeapSize - event.afterGC.heapStatistics.usedHeapSize;
    gcMicros += event.cost;
    longestGcMicros = Math.max(longestGcMicros, event.cost);
    if (event.gcType === 'Scavenge') scavenges++;
    // One full collection also reports its incremental marking (and weak callbacks) as events of their own:
    // counting every other event counted each full collection two or three times (until 2026-11-27).
    else if (event.gcType === 'MarkSweepCompact') majors++;
  }
  const n = windowNumber++;
  if (window.session) {
    const { profile } = await window.session.post('Profiler.stop');
    // Retained: a full collection first, so that what is left is what is still referenced.
    if (retainedOnly) await window.session.post('HeapProfiler.collectGarbage');
    const { profile: heap } = await window.session.post('HeapProfiler.stopSampling');
    window.session.disconnect();
    writeFileSync(join(outDir, `${n}.cpuprofile`), JSON.stringify(profile));
    writeFileSync(join(outDir, `${n}.heapprofile`), JSON.stringify(heap));
  }
  const ms = (ns) => ns / 1e6;
  const report = {
    elapsedMs,
    cpuMicros: cpu.user + cpu.system,
    allocatedBytes: heap - window.heap + freed,
    gcMicros,
    scavenges,
    majors,
    longestGcMs: longestGcMicros / 1000,
    loopDelayP50Ms: ms(window.delay.percentile(50)),
    loopDelayP99Ms: ms(window.delay.percentile(99)),
    loopDelayMaxMs: ms(window.delay.max),
    sql: [...sqlTime].map(([statement, [calls, ns]]) => ({ statement, calls, micros: Number(ns) / 1000 })),
  };
  // Written to a temporary name, then renamed: the bench polls for the final name.
  writeFileSync(join(outDir, `${n}.json.tmp`), JSON.stringify(report));
  renameSync(join(outDir, `${n}.json.tmp`), join(outDir, `${n}.json`));
}

// Threads inherit the preload: the window is the main thread's (CPU time is the process's, every thread's).
if (outDir && isMainThread) {
  let busy = Promise.resolve();
  process.on('SIGUSR2', () => {
    busy = busy.then(() => (open ? end() : begin())).catch((error) => console.error('bench probe:', error));
  });
}
