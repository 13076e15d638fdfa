import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './processes.js';

/** The Jaeger v2 binary (built from the Go module proxy: github.com/jaegertracing/jaeger ./cmd/jaeger). */
export const JAEGER_BIN = process.env.PVAI_JAEGER_BIN ?? '';

/**
 * Whether the tracing suites can run: locally they are skipped without the binary; in CI (CI=true) a missing
 * binary fails instead of silently skipping, as a missing Qdrant does.
 */
export function jaegerAvailable(): boolean {
  if (JAEGER_BIN !== '' && existsSync(JAEGER_BIN)) return true;
  if (process.env.CI === 'true') throw new Error(`CI=true but PVAI_JAEGER_BIN (${JAEGER_BIN}) is no Jaeger binary`);
  return false;
}

/** A span as Jaeger's query API (`/api/traces/{id}`) returns it. */
export interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  references: Array<{ refType: string; traceID: string; spanID: string }>;
  tags: Array<{ key: string; type: string; value: unknown }>;
  processID: string;
}

export interface Jaeger {
  /** The OTLP/HTTP receiver, as OTEL_EXPORTER_OTLP_ENDPOINT. */
  otlpUrl: string;
  queryUrl: string;
  /** The spans of a trace (none while it is unknown). */
  spans(traceId: string): Promise<JaegerSpan[]>;
  /** The spans of every trace (up to 20) holding a span named `operation` (a background job's: no trace id is known). */
  find(operation: string): Promise<JaegerSpan[][]>;
  /** The service names Jaeger has seen. */
  services(): Promise<string[]>;
  stop(): Promise<void>;
}

/**
 * A real Jaeger v2 (an OpenTelemetry Collector distribution): the OTLP/HTTP receiver, in-memory storage and the
 * query API, on free loopback ports, with no telemetry of its own; resolves once the query API answers.
 */
export async function startJaeger(): Promise<Jaeger> {
  const dir = mkdtempSync(join(tmpdir(), 'pvai-jaeger-'));
  const [otlp, query, grpc] = [await freePort(), await freePort(), await freePort()];
  const config = `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:${query}
    grpc:
      endpoint: 127.0.0.1:${grpc}
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 10000
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${otlp}
processors:
  batch:
    timeout: 50ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`;
  writeFileSync(join(dir, 'config.yaml'), config);
  const child: ChildProcess = spawn(JAEGER_BIN, ['--config', join(dir, 'config.yaml')], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const queryUrl = `http://127.0.0.1:${query}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    const up = await fetch(`${queryUrl}/api/services`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`Jaeger did not start: ${stderr}`);
    }
    await sleep(100);
  }
  return {
    otlpUrl: `http://127.0.0.1:${otlp}`,
    queryUrl,
    async spans(traceId) {
      const res = await fetch(`${queryUrl}/api/traces/${traceId}`);
      if (res.status === 404) return [];
      const body = (await res.json()) as { data?: Array<{ spans: JaegerSpan[] }> | null };
      return body.data?.[0]?.spans ?? [];
    },
    async find(operation) {
      const query = new URLSearchParams({ service: 'pvai', operation, limit: '20', lookback: '1h' });
      const res = await fetch(`${queryUrl}/api/traces?${query}`);
      if (!res.ok) return [];
      const body = (await res.json()) as { data?: Array<{ spans: JaegerSpan[] }> | null };
      return (body.data ?? []).map((t) => t.spans);
    },
    async services() {
      const body = (await (await fetch(`${queryUrl}/api/services`)).json()) as { data: string[] | null };
      return body.data ?? [];
    },
    stop,
  };
}

/** A span's attribute, by key. */
export function tag(span: JaegerSpan | undefined, key: string): unknown {
  return span?.tags.find((t) => t.key === key)?.value;
}
