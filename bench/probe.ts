/**
 * The bench's side of probe.mjs: node arguments that preload it into a server process, and windows opened and
 * closed around a measured phase. The window's report divided by the requests served in it gives the
 * per-request CPU and bytes the budget in docs/architecture.md is written in.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ROOT } from './lib.js';

export interface ProbeReport {
  elapsedMs: number;
  cpuMicros: number;
  allocatedBytes: number;
  gcMicros: number;
  scavenges: number;
  majors: number;
  /** The longest single GC pause of the window. */
  longestGcMs: number;
  loopDelayP50Ms: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  /** The window's CPU profile, when the probe was started with `profile`. */
  profilePath?: string;
  /** Its sampling heap profile (garbage included), likewise. */
  heapProfilePath?: string;
  /** With `sql`: the time of every call into SQLite in the window, by statement. */
  sql?: SqlTime[];
}

export interface SqlTime {
  /** `run`, `get`, `all` or `exec`, and the statement (a multi-row VALUES list shortened to its first tuple). */
  statement: string;
  calls: number;
  micros: number;
}

export interface Probe {
  /** Node arguments and environment that load the probe into the process to be measured. */
  nodeArgs: string[];
  env: Record<string, string>;
  attach(child: ChildProcess): void;
  /** Runs `phase` inside a window and returns the phase's result with the process's report of that window. */
  around<T>(phase: () => Promise<T>): Promise<[T, ProbeReport]>;
}

export function createProbe(options: { profile?: boolean | 'retained'; sql?: boolean } = {}): Probe {
  const dir = mkdtempSync(join(tmpdir(), 'pvai-bench-probe-'));
  let child: ChildProcess | undefined;
  let windows = 0;
  const signal = () => {
    if (!child?.pid) throw new Error('probe: no process attached');
    child.kill('SIGUSR2');
  };
  return {
    nodeArgs: ['--import', join(ROOT, 'bench/probe.mjs')],
    env: {
      PVAI_BENCH_PROBE_OUT: dir,
      PVAI_BENCH_PROFILE: options.profile === 'retained' ? 'retained' : options.profile ? '1' : '0',
      PVAI_BENCH_SQL: options.sql ? '1' : '0',
    },
    attach(process) {
      child = process;
    },
    async around(phase) {
      const n = windows++;
      signal();
      // The window opens asynchronously (the profiler's start is a round trip); 50 ms is far more than it takes.
      await sleep(50);
      const result = await phase();
      signal();
      const file = join(dir, `${n}.json`);
      for (let waited = 0; !existsSync(file); waited += 20) {
        if (waited > 30_000) throw new Error(`probe: no report for window ${n}`);
        await sleep(20);
      }
      const report = JSON.parse(readFileSync(file, 'utf8')) as ProbeReport;
      const profile = join(dir, `${n}.cpuprofile`);
      const heap = join(dir, `${n}.heapprofile`);
      return [result, existsSync(profile) ? { ...report, profilePath: profile, heapProfilePath: heap } : report];
    },
  };
}

/** Per-request figures of a window in which `requests` were served. */
export function perRequest(report: ProbeReport, requests: number) {
  return {
    cpuMicros: report.cpuMicros / requests,
    allocatedKb: report.allocatedBytes / requests / 1024,
    gcMicros: report.gcMicros / requests,
  };
}
