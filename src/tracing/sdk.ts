import { context, propagation, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { TRACING } from './switch.js';

type Env = Readonly<Record<string, string | undefined>>;

const set = (value: string | undefined) => value !== undefined && value.trim() !== '';

/**
 * Tracing is on when an OTLP endpoint is configured (`OTEL_EXPORTER_OTLP_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), unless `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`.
 */
export function tracingConfigured(env: Env = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return false;
  return set(env.OTEL_EXPORTER_OTLP_ENDPOINT) || set(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/** The running SDK: `shutdown` exports what is buffered, then stops tracing. */
export interface Tracing {
  shutdown(): Promise<void>;
}

/**
 * Starts the OpenTelemetry SDK when tracing is configured (else undefined, and nothing is loaded into the hot
 * path): traces only (no metrics or logs pipeline, which `/metrics` and pino cover), the OTLP/HTTP exporter and
 * the batch processor as the standard `OTEL_*` variables set them (endpoint, headers, `OTEL_BSP_*`,
 * `OTEL_TRACES_SAMPLER`), W3C trace context propagation, service name `pvai` unless `OTEL_SERVICE_NAME` or
 * `OTEL_RESOURCE_ATTRIBUTES` names one. No auto-instrumentation: the product's own stages are its spans.
 */
export function startTracing(env: Env = process.env): Tracing | undefined {
  if (!tracingConfigured(env) || TRACING.on) return undefined;
  const named = set(env.OTEL_SERVICE_NAME) || (env.OTEL_RESOURCE_ATTRIBUTES ?? '').includes('service.name=');
  const sdk = new NodeSDK({
    traceExporter: new OTLPTraceExporter(),
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [],
    ...(named ? {} : { serviceName: 'pvai' }),
  });
  sdk.start();
  TRACING.on = true;
  TRACING.content = env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.trim().toLowerCase() === 'true';
  let stopped: Promise<void> | undefined;
  return {
    shutdown() {
      stopped ??= (async () => {
        TRACING.on = false;
        try {
          await sdk.shutdown();
        } finally {
          // Unregistered, so that a later start in the same process (tests) registers its own.
          trace.disable();
          context.disable();
          propagation.disable();
        }
      })();
      return stopped;
    },
  };
}
