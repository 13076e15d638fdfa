/**
 * bench:chat's "tracing on" rows (`-- --tracing` or BENCH_TRACING=1): a second pvai, the same configuration on
 * storage of its own, started with OpenTelemetry on (OTEL_EXPORTER_OTLP_ENDPOINT at a real OpenTelemetry
 * Collector from PVAI_OTELCOL_BIN, spans to a file; default batch settings but a 1 s delay): its misses are measured in the same
 * alternating rounds as pvai's, so the two rows show what tracing costs a miss (req/s, CPU µs).
 */
import { type Collector, collectorAvailable, startCollector } from '../test/support/otel-collector.js';
import { type BenchServer, createBenchAccount, freshStorage, startBenchServer } from './lib.js';
import type { Probe } from './probe.js';

export const TRACING_ROWS = process.argv.includes('--tracing') || process.env.BENCH_TRACING === '1';

export interface TracedPvai {
  server: BenchServer;
  /** Its accounts' keys, each used once already (as the untraced server's are before its rows). */
  keys: string[];
  stop(): Promise<void>;
}

/** The traced pvai with `accounts` accounts, its probe attached; its spans go to a collector of its own. */
export async function startTracedPvai(
  env: Record<string, string>,
  config: object,
  probe: Probe,
  accounts: number,
  warm: (url: string, key: string) => Promise<void>,
): Promise<TracedPvai> {
  if (!collectorAvailable())
    throw new Error('--tracing needs PVAI_OTELCOL_BIN: an OpenTelemetry Collector binary (.ci/go-tools)');
  let collector: Collector | undefined;
  let storage: Awaited<ReturnType<typeof freshStorage>> | undefined;
  let server: BenchServer | undefined;
  const stop = async () => {
    await server?.stop();
    await storage?.drop();
    await collector?.stop();
  };
  try {
    collector = await startCollector();
    storage = await freshStorage();
    const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.otlpUrl, OTEL_BSP_SCHEDULE_DELAY: '1000' };
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
