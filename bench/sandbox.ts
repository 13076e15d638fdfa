/**
 * Sandbox benchmark (`npm run bench:sandbox`): latency of `print(1)` from a warm pool and from a cold
 * start, and throughput at several concurrency levels. Prints a markdown table. Runs in well under a minute.
 */
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { type CodeRunner, createSandbox, type SandboxConfig } from '../src/sandbox/index.js';

const WARM_CALLS = 100;
const COLD_CALLS = 40;
/** Pause between warm calls so the pool has replaced the sandbox just used (a start takes ~25-50 ms). */
const REFILL_PAUSE_MS = 80;
const THROUGHPUT_CALLS = 150;
const CONCURRENCY_LEVELS = [2, 8, 20];

async function printOne(sandbox: CodeRunner): Promise<number> {
  const started = performance.now();
  const outcome = await sandbox.execute({ code: 'print(1)', timeoutSeconds: 10, accountId: 'acct' });
  const elapsed = performance.now() - started;
  if (outcome.kind !== 'completed' || outcome.output !== '1\n' || outcome.error !== null) {
    throw new Error(`unexpected outcome: ${JSON.stringify(outcome)}`);
  }
  return elapsed;
}

function percentile(samples: number[], fraction: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1);
  return sorted[Math.max(0, index)] ?? Number.NaN;
}

async function withSandbox<T>(config: Partial<SandboxConfig>, body: (sandbox: CodeRunner) => Promise<T>): Promise<T> {
  const sandbox = createSandbox(config);
  try {
    const health = await sandbox.health();
    if (!health.ok) throw new Error(`sandbox not healthy: ${health.detail}`);
    return await body(sandbox);
  } finally {
    await sandbox.close();
  }
}

async function sequentialLatencies(config: Partial<SandboxConfig>, calls: number, pauseMs: number): Promise<number[]> {
  return withSandbox(config, async (sandbox) => {
    await sleep(300); // let the pool (if any) finish starting
    const samples: number[] = [];
    for (let call = 0; call < calls; call += 1) {
      samples.push(await printOne(sandbox));
      if (pauseMs > 0) await sleep(pauseMs);
    }
    return samples;
  });
}

async function throughput(concurrency: number): Promise<number> {
  // Product defaults for pool and queue; maxConcurrent follows the offered load so it is what is measured.
  // One account offers all of it, so its share is the whole server here (by default it would be half).
  const config = {
    maxConcurrent: concurrency,
    maxConcurrentPerAccount: concurrency,
    maxQueue: 64,
    maxQueuePerAccount: 64,
  };
  return withSandbox(config, async (sandbox) => {
    await sleep(300);
    let remaining = THROUGHPUT_CALLS;
    const started = performance.now();
    const worker = async (): Promise<void> => {
      while (remaining > 0) {
        remaining -= 1;
        await printOne(sandbox);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    return THROUGHPUT_CALLS / ((performance.now() - started) / 1000);
  });
}

async function main(): Promise<void> {
  const benchStarted = performance.now();
  const warm = await sequentialLatencies({ poolSize: 2 }, WARM_CALLS, REFILL_PAUSE_MS);
  const cold = await sequentialLatencies({ poolSize: 0 }, COLD_CALLS, 0);
  const rates: [number, number][] = [];
  for (const level of CONCURRENCY_LEVELS) rates.push([level, await throughput(level)]);

  const ms = (value: number): string => `${value.toFixed(1)} ms`;
  const lines = [
    `Sandbox benchmark: \`print(1)\`, end to end through \`execute()\` (${availableParallelism()} CPUs, Node ${process.version})`,
    '',
    '| measurement | p50 | p99 | target |',
    '|---|---|---|---|',
    `| warm latency (pool of 2, ${WARM_CALLS} sequential calls) | ${ms(percentile(warm, 0.5))} | ${ms(percentile(warm, 0.99))} | p50 ≤ 15 ms |`,
    `| cold latency (no pool, ${COLD_CALLS} sequential calls) | ${ms(percentile(cold, 0.5))} | ${ms(percentile(cold, 0.99))} | ≤ 100 ms |`,
    '',
    '| concurrency | throughput |',
    '|---|---|',
    ...rates.map(([level, rate]) => `| ${level} | ${rate.toFixed(1)} executions/s |`),
    '',
    `(${THROUGHPUT_CALLS} calls per concurrency level, pool of 2, maxConcurrent = concurrency; bench took ${((performance.now() - benchStarted) / 1000).toFixed(1)} s)`,
  ];
  console.log(lines.join('\n'));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
