import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './processes.js';

/**
 * The OpenTelemetry Collector the tracing tests export to: `.ci/otelcol` (the collector's own OTLP receiver and
 * batch processor, the contrib file exporter), built from the Go module proxy by `.ci/go-tools`.
 */
export const COLLECTOR_BIN = process.env.PVAI_OTELCOL_BIN ?? '';

/**
 * Whether the tracing suites can run: locally they are skipped without the binary; in CI (CI=true) a missing
 * binary fails instead of silently skipping, as a missing Qdrant does.
 */
export function collectorAvailable(): boolean {
  if (COLLECTOR_BIN !== '' && existsSync(COLLECTOR_BIN)) return true;
  if (process.env.CI === 'true') {
    throw new Error(`CI=true but PVAI_OTELCOL_BIN (${COLLECTOR_BIN}) is no OpenTelemetry Collector binary`);
  }
  return false;
}

/** A span the collector received, in the shape trace viewers show it (Jaeger's: ids, name, parent, tags). */
export interface ReceivedSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  /** The parent, as a CHILD_OF reference (none for a root span). */
  references: Array<{ refType: 'CHILD_OF'; traceID: string; spanID: string }>;
  /** The span's attributes, then `span.kind` and `otel.status_code` as viewers derive them. */
  tags: Array<{ key: string; value: unknown }>;
  /** The resource's `service.name`. */
  service: string;
}

export interface Collector {
  /** The OTLP/HTTP receiver, as OTEL_EXPORTER_OTLP_ENDPOINT. */
  otlpUrl: string;
  /** The spans of a trace (none while it is unknown). */
  spans(traceId: string): Promise<ReceivedSpan[]>;
  /** The spans of every trace holding a span named `operation` (a background job's: no trace id is known). */
  find(operation: string): Promise<ReceivedSpan[][]>;
  /** The service names seen. */
  services(): Promise<string[]>;
  stop(): Promise<void>;
}

/** OTLP's AnyValue in its JSON encoding. */
interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: AnyValue[] };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  attributes?: Array<{ key: string; value: AnyValue }>;
  status?: { code?: number };
}
interface OtlpExport {
  resourceSpans?: Array<{
    resource?: { attributes?: Array<{ key: string; value: AnyValue }> };
    scopeSpans?: Array<{ spans?: OtlpSpan[] }>;
  }>;
}

function attributeValue(value: AnyValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  // Viewers show an array attribute as its JSON (Jaeger does).
  if (value.arrayValue !== undefined) return JSON.stringify((value.arrayValue.values ?? []).map(attributeValue));
  return undefined;
}

const KINDS = ['', 'internal', 'server', 'client', 'producer', 'consumer'];
const STATUSES = ['', 'OK', 'ERROR'];

function received(span: OtlpSpan, service: string): ReceivedSpan {
  const tags = (span.attributes ?? []).map(({ key, value }) => ({ key, value: attributeValue(value) }));
  const kind = KINDS[span.kind ?? 0];
  if (kind) tags.push({ key: 'span.kind', value: kind });
  const status = STATUSES[span.status?.code ?? 0];
  if (status) tags.push({ key: 'otel.status_code', value: status });
  const parent = span.parentSpanId ?? '';
  return {
    traceID: span.traceId,
    spanID: span.spanId,
    operationName: span.name,
    references: parent === '' ? [] : [{ refType: 'CHILD_OF', traceID: span.traceId, spanID: parent }],
    tags,
    service,
  };
}

/**
 * A real OpenTelemetry Collector on a free loopback port: the OTLP/HTTP receiver, a 50 ms batch, and the file
 * exporter writing each batch as a line of OTLP JSON, which `spans`/`find` read back; resolves once the receiver
 * answers.
 */
export async function startCollector(): Promise<Collector> {
  const dir = mkdtempSync(join(tmpdir(), 'pvai-otelcol-'));
  const otlp = await freePort();
  const file = join(dir, 'spans.jsonl');
  const config = `receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${otlp}
processors:
  batch:
    timeout: 50ms
exporters:
  file:
    path: ${file}
    flush_interval: 20ms
service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [file]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
`;
  writeFileSync(join(dir, 'config.yaml'), config);
  const child: ChildProcess = spawn(COLLECTOR_BIN, ['--config', join(dir, 'config.yaml')], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const otlpUrl = `http://127.0.0.1:${otlp}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    // An empty export is accepted once the receiver is up.
    const up = await fetch(`${otlpUrl}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"resourceSpans":[]}',
    }).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`the OpenTelemetry Collector did not start: ${stderr}`);
    }
    await sleep(100);
  }

  /** Every span written so far, in arrival order. */
  const all = (): ReceivedSpan[] => {
    if (!existsSync(file)) return [];
    const spans: ReceivedSpan[] = [];
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      let parsed: OtlpExport;
      try {
        parsed = JSON.parse(line) as OtlpExport;
      } catch {
        continue; // a line still being written
      }
      for (const resource of parsed.resourceSpans ?? []) {
        const name = resource.resource?.attributes?.find((a) => a.key === 'service.name')?.value;
        const service = String(name ? attributeValue(name) : '');
        for (const scope of resource.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) spans.push(received(span, service));
        }
      }
    }
    return spans;
  };
  return {
    otlpUrl,
    async spans(traceId) {
      return all().filter((s) => s.traceID === traceId);
    },
    async find(operation) {
      const spans = all();
      const traces = [...new Set(spans.filter((s) => s.operationName === operation).map((s) => s.traceID))];
      return traces.map((id) => spans.filter((s) => s.traceID === id));
    },
    async services() {
      return [...new Set(all().map((s) => s.service))];
    },
    stop,
  };
}

/** A span's attribute, by key. */
export function tag(span: ReceivedSpan | undefined, key: string): unknown {
  return span?.tags.find((t) => t.key === key)?.value;
}
