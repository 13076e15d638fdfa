/**
 * bench:chat's "tracing on" rows (`-- --tracing` or BENCH_TRACING=1): a second pvai, the same configuration on
 * storage of its own, started with OpenTelemetry on (OTEL_EXPORTER_OTLP_ENDPOINT at a real Jaeger v2 from
 * PVAI_JAEGER_BIN, in-memory storage, default batch settings but a 1 s delay): its misses are measured in the same
 * alternating rounds as pvai's, so the two rows show what tracing costs a miss (req/s, CPU µs).
 */
import { type Jaeger, jaegerAvailable, startJaeger } from '../test/support/jaeger.js';
import { type BenchServer, createBenchAccount, freshStorage, startBenchServer } from './lib.js';
import type { Probe } from './probe.js';

export const TRACING_ROWS = process.argv.includes('--tracing') || process.env.BENCH_TRACING === '1';

export interface TracedPvai {
  server: BenchServer;
  /** Its accounts' keys, each used once already (as the untraced server's are before its rows). */
  keys: string[];
  stop(): Promise<void>;
}

/** The traced pvai with `accounts` accounts, its probe attached; its spans go to a Jaeger of its own. */
export async function startTracedPvai(
  env: Record<string, string>,
  config: object,
  probe: Probe,
  accounts: number,
  warm: (url: string, key: string) => Promise<void>,
): Promise<TracedPvai> {
  if (!jaegerAvailable()) throw new Error('--tracing needs PVAI_JAEGER_BIN: a Jaeger v2 binary');
  let jaeger: Jaeger | undefined;
  let storage: Awaited<ReturnType<typeof freshStorage>> | undefined;
  let server: BenchServer | undefined;
  const stop = async () => {
    await server?.stop();
    await storage?.drop();
    await jaeger?.stop();
  };
  try {
    jaeger = await startJaeger();
    storage = await freshStorage();
    const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpUrl, OTEL_BSP_SCHEDULE_DELAY: '1000' };
    server = await startBenchServer({ ...env, ...storage.env, ...otel, ...probe.env }, config, probe.nodeArgs);
    probe.attach(server.child);
    const keys: string[] = [];
    for (let i = 0; i < accounts; i++) keys.push(await createBenchAccount(server.url, `traced${i}@example.com`));
    for (const key of keys) await warm(server.url, key);
    return { server, keys, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
