/** bench:chat's printed report: the tables, the ratios against its guard, the per-request budget. */
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, table } from './lib.js';
import { perRequest, type SqlTime } from './probe.js';
import { diffProfiles, summariseHeapProfile, summariseProfile } from './profile-summary.js';
import type { Measured } from './throughput-rounds.js';

interface Rate {
  p50: number;
  p99: number;
  failed: number;
  loop?: number;
  longestGc?: number;
  majors?: number;
}

export interface ChatReport {
  steal: number | undefined;
  loads: Record<'directLoad' | 'bareLoad' | 'stackLoad' | 'pvaiLoad' | 'portkeyLoad' | 'cacheLoad', Measured>;
  /** pvai's misses with OpenTelemetry tracing on (`-- --tracing`), exporting to a real OpenTelemetry Collector. */
  tracedLoad?: Measured;
  /** Medians of the rounds' paired ratios (throughput-rounds.ts): pvai misses ÷ the floor and ÷ Portkey, hits ÷ the floor. */
  ratios: Record<'miss' | 'portkey' | 'hit', number>;
  throughputRounds: number;
  rates: Record<'directRate' | 'bareRate' | 'stackRate' | 'pvaiRate', Rate>;
  streams: Record<'directStream' | 'pvaiStream', { ttftP50: number; gapMean: number }>;
  local: { direct: number; through: number };
  connections: number;
  seconds: number;
  rateRounds: number;
  localRounds: number;
}

const mark = (ok: boolean) => (ok ? 'met' : 'NOT met');
const rateRow = (name: string, r: Rate) => [
  name,
  r.p50,
  r.p99,
  r.failed,
  r.loop ?? '-',
  r.longestGc ?? '-',
  r.majors ?? '-',
];

export function printReport(r: ChatReport): void {
  const { directLoad, bareLoad, stackLoad, pvaiLoad, portkeyLoad, cacheLoad } = r.loads;
  const budget = (m: Measured) => (m.report ? perRequest(m.report, m.requests) : undefined);
  const row = (name: string, m: Measured) => {
    const b = budget(m);
    return [
      name,
      m.rps,
      m.p50,
      m.p99,
      b ? b.cpuMicros : '-',
      b ? b.allocatedKb : '-',
      b ? b.gcMicros : '-',
      m.report ? m.report.loopDelayP99Ms : '-',
    ];
  };
  console.log(
    `\npvai chat benchmark — mock upstream in its own process; ${r.connections} connections × ${r.seconds} s (autocannon, whole-ms latencies)`,
  );
  if (r.throughputRounds > 1)
    console.log(
      `The floor, pvai's misses and hits and Portkey: ${r.throughputRounds} alternating rounds; req/s and latencies are ` +
        "each row's median, CPU, bytes and GC its windows' totals over their requests, ratios the rounds' median.",
    );
  if (r.steal !== undefined)
    console.log(`CPU time stolen by the hypervisor during this run: ${(r.steal * 100).toFixed(1)} %`);
  console.log('Per request: CPU µs, KB allocated (JS heap) and GC µs of the server process, from its own probe.\n');
  console.log(
    table(
      ['path', 'req/s', 'p50 ms', 'p99 ms', 'CPU µs/req', 'KB alloc/req', 'GC µs/req', 'loop delay p99 ms'],
      [
        row('mock upstream directly', directLoad),
        row('bare Node proxy (node:http + undici, no work: the floor)', bareLoad),
        row("Koa + openapi-backend proxy (pvai's stack, no product work)", stackLoad),
        row('through pvai, misses (auth, limits, credits, usage, SLA, metrics, memory, routing)', pvaiLoad),
        ...(r.tracedLoad ? [row('through pvai, misses, tracing on (OTLP to a collector)', r.tracedLoad)] : []),
        row('through Portkey gateway 1.15.2', portkeyLoad),
        row('pvai cache hits', cacheLoad),
      ],
    ),
  );
  const { miss: missRatio, portkey: portkeyRatio, hit: hitRatio } = r.ratios;
  console.log(
    `\npvai misses / Koa + openapi-backend floor: ${missRatio.toFixed(2)}×; / Portkey: ${portkeyRatio.toFixed(1)}× ` +
      `(printed, no target); cache hits / floor: ${hitRatio.toFixed(2)}×; pvai / bare proxy: ` +
      `${(pvaiLoad.rps / bareLoad.rps).toFixed(2)}×  (non-2xx: stack ${stackLoad.non2xx}, pvai ${pvaiLoad.non2xx}, ` +
      `Portkey ${portkeyLoad.non2xx}, cache ${cacheLoad.non2xx})`,
  );
  const floor = budget(stackLoad);
  const miss = budget(pvaiLoad);
  const hit = budget(cacheLoad);
  if (floor && miss && hit) {
    console.log('\nPer-request budget beyond the floor (pvai − Koa + openapi-backend proxy, same run)\n');
    console.log(
      table(
        ['request', 'CPU µs', 'KB allocated', 'KB allocated in all (target ≤ 25 for a miss)'],
        [
          ['cache miss', miss.cpuMicros - floor.cpuMicros, miss.allocatedKb - floor.allocatedKb, miss.allocatedKb],
          ['cache hit', hit.cpuMicros - floor.cpuMicros, hit.allocatedKb - floor.allocatedKb, hit.allocatedKb],
          ...tracedBudget(r.tracedLoad ? budget(r.tracedLoad) : undefined, floor),
        ],
      ),
    );
  }
  const { directRate, bareRate, stackRate, pvaiRate } = r.rates;
  console.log(
    `\nFixed rate 1,000 req/s, 5 s, open loop (µs resolution), median of ${r.rateRounds} alternating rounds\n`,
  );
  console.log(
    table(
      ['path', 'p50 ms', 'p99 ms', 'failed', 'server loop delay p99 ms', 'longest GC pause ms', 'major GCs per 5 s'],
      [
        rateRow('mock upstream directly', directRate),
        rateRow('bare Node proxy', bareRate),
        rateRow('Koa + openapi-backend proxy', stackRate),
        rateRow('through pvai', pvaiRate),
        ['added by the bare proxy', bareRate.p50 - directRate.p50, bareRate.p99 - directRate.p99, '-', '-', '-', '-'],
        [
          'added by the Koa + openapi-backend proxy',
          stackRate.p50 - directRate.p50,
          stackRate.p99 - directRate.p99,
          '-',
          '-',
          '-',
          '-',
        ],
        ['added by pvai', pvaiRate.p50 - directRate.p50, pvaiRate.p99 - directRate.p99, '-', '-', '-', '-'],
      ],
    ),
  );
  const tail = pvaiRate.p99 - stackRate.p99;
  console.log(`\np99 added by pvai beyond the floor's: ${tail.toFixed(3)} ms`);
  printGuard(missRatio, tail, hitRatio);
  const { directStream, pvaiStream } = r.streams;
  console.log('\nStreaming, 20 chunks 2 ms apart, 100 sequential streams\n');
  console.log(
    table(
      ['path', 'time to first token p50 ms', 'mean inter-chunk gap ms'],
      [
        ['mock upstream directly', directStream.ttftP50, directStream.gapMean],
        ['through pvai', pvaiStream.ttftP50, pvaiStream.gapMean],
      ],
    ),
  );
  const ttft = pvaiStream.ttftP50 - directStream.ttftP50;
  console.log(`\nfirst token added by pvai: ${ttft.toFixed(3)} ms (target ≤ 2 ms: ${mark(ttft <= 2)})`);
  const ratio = r.local.through / r.local.direct;
  console.log(
    `\nLocal engine (stories260K, threads 1), 400-token answers, median of ${r.localRounds} alternating rounds\n`,
  );
  console.log(
    table(
      ['path', 'tokens/s', 'ratio'],
      [
        ['node-llama-cpp directly', r.local.direct, 1],
        ['through pvai (HTTP, PV-CODEX → local)', r.local.through, ratio],
      ],
    ),
  );
  console.log(`\nlocal tokens/s through pvai / direct: ${ratio.toFixed(2)} (target ≥ 0.95: ${mark(ratio >= 0.95)})`);
  const sql = pvaiLoad.report?.sql;
  if (sql) printSqlTime(sql, pvaiLoad.requests);
  if (pvaiLoad.report?.profilePath) {
    console.log(`\n(profiling was on: every probed figure above carries the profiler's own cost)`);
    printProfiles('miss', pvaiLoad, r.loads.stackLoad);
    printProfiles('hit', r.loads.cacheLoad, r.loads.stackLoad);
  }
}

/**
 * With --profile: one phase's CPU and heap profiles kept in bench-output/ (`chat-miss.*`, `chat-hit.*`), summed by
 * folder and ranked by what pvai spends beyond the floor. The hits too: a hit makes no upstream call, so what it
 * costs beyond the floor is the product's own work, nothing else.
 */
function printProfiles(phase: 'miss' | 'hit', load: Measured, floor: Measured): void {
  const profile = load.report?.profilePath;
  if (!profile) return;
  mkdirSync(join(ROOT, 'bench-output'), { recursive: true });
  const kept = join(ROOT, 'bench-output', `chat-${phase}.cpuprofile`);
  copyFileSync(profile, kept);
  console.log(`\n=== pvai's cache ${phase === 'miss' ? 'misses' : 'hits'}, profiled ===\n`);
  console.log(summariseProfile(kept, load.requests));
  const heap = load.report?.heapProfilePath;
  if (heap) {
    const keptHeap = join(ROOT, 'bench-output', `chat-${phase}.heapprofile`);
    copyFileSync(heap, keptHeap);
    console.log(`\n${summariseHeapProfile(keptHeap, load.requests)}`);
  }
  const floorProfile = floor.report?.profilePath;
  if (floorProfile) {
    const keptFloor = join(ROOT, 'bench-output', 'chat-floor.cpuprofile');
    copyFileSync(floorProfile, keptFloor);
    console.log(
      `\n${diffProfiles({ path: keptFloor, requests: floor.requests }, { path: kept, requests: load.requests })}`,
    );
  }
}

/** With --sql: the miss window's time in SQLite, per miss and by statement, largest first. */
function printSqlTime(sql: readonly SqlTime[], requests: number): void {
  const total = sql.reduce((sum, s) => sum + s.micros, 0);
  console.log(
    `\nSQLite in pvai's miss window (--sql; timing each call costs ~0.1 µs): ${(total / requests).toFixed(1)} µs a miss\n`,
  );
  const rows = [...sql]
    .sort((a, b) => b.micros - a.micros)
    .slice(0, 15)
    .map((s) => [
      s.statement,
      s.calls / requests,
      s.micros / s.calls,
      s.micros / requests,
      `${((100 * s.micros) / total).toFixed(1)} %`,
    ]);
  console.log(table(['call', 'calls a miss', 'µs a call', 'µs a miss', 'share'], rows));
}

/** The traced misses' row of the budget table, when they were measured. */
function tracedBudget(
  traced: { cpuMicros: number; allocatedKb: number } | undefined,
  floor: { cpuMicros: number; allocatedKb: number },
): Array<Array<string | number>> {
  if (!traced) return [];
  const name = 'cache miss, tracing on';
  return [[name, traced.cpuMicros - floor.cpuMicros, traced.allocatedKb - floor.allocatedKb, traced.allocatedKb]];
}

/**
 * The chat path's guard: past its throughput work, these bounds are what a change must not break (a change that
 * does is a regression). Portkey's ratio is printed beside, with no bound.
 */
function printGuard(missRatio: number, tailMs: number, hitRatio: number): void {
  const rows: Array<[string, string, string, boolean]> = [
    ['cache misses ÷ the Koa + openapi-backend floor', `${missRatio.toFixed(2)}×`, '≥ 0.55×', missRatio >= 0.55],
    ["p99 at 1,000 req/s beyond the floor's", `+${tailMs.toFixed(2)} ms`, '≤ +2 ms', tailMs <= 2],
    ['cache hits ÷ the floor', `${hitRatio.toFixed(2)}×`, '≥ 0.85×', hitRatio >= 0.85],
  ];
  const all = rows.every(([, , , ok]) => ok);
  console.log("\nThe chat path's guard\n");
  console.log(
    table(
      ['guard', 'measured', 'bound', 'met'],
      [...rows.map(([name, value, bound, ok]) => [name, value, bound, mark(ok)]), ['all three', '', '', mark(all)]],
    ),
  );
}
