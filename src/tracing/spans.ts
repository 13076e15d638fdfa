import { type Attributes, context, propagation, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { ATTR_ERROR_TYPE } from '@opentelemetry/semantic-conventions';

export type { Attributes, Span };
export { SpanKind };

/** The product's tracer: every span of pvai is its. Call only when TRACING.on. */
function tracer() {
  return trace.getTracer('pvai');
}

/** A span under the active one (the request's, or the stage around it); not made active itself. */
export function startSpan(name: string, attributes?: Attributes, kind: SpanKind = SpanKind.INTERNAL): Span {
  return tracer().startSpan(name, { kind, ...(attributes ? { attributes } : {}) });
}

/** Runs `fn` with `span` active: the spans `fn` starts are its children, and outgoing calls carry it. */
export function inSpan<T>(span: Span, fn: () => T): T {
  return context.with(trace.setSpan(context.active(), span), fn);
}

/**
 * What a failure says on its span: `error.type` the error's code (an AppError's, a ProviderError's kind) or its
 * class, status ERROR. The message is the product's own, never the content of a request.
 */
export function failSpan(span: Span, err: unknown): void {
  const code = (err as { code?: unknown; kind?: unknown } | null)?.code ?? (err as { kind?: unknown } | null)?.kind;
  const type = typeof code === 'string' ? code : err instanceof Error ? err.name : 'unknown';
  span.setAttribute(ATTR_ERROR_TYPE, type);
  span.setStatus({ code: SpanStatusCode.ERROR, ...(err instanceof Error ? { message: err.message } : {}) });
}

/**
 * `fn` in a span of its own, active while it runs, ended when it settles; a throw marks it failed. Call only
 * when TRACING.on (`TRACING.on ? traced(...) : fn()`): off, the caller makes no closure and no attributes.
 */
export async function traced<T>(
  name: string,
  attributes: Attributes | undefined,
  fn: (span: Span) => Promise<T>,
  kind: SpanKind = SpanKind.INTERNAL,
): Promise<T> {
  const span = startSpan(name, attributes, kind);
  try {
    return await inSpan(span, () => fn(span));
  } catch (err) {
    failSpan(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/**
 * A background job's run (document ingestion, a vector store file, a memory extraction) in a trace of its own, whatever
 * context the loop that runs it was kicked from: the request that queued the job has ended, and the queues keep no
 * traceparent. Call only when TRACING.on.
 */
export async function tracedJob<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T>): Promise<T> {
  const span = tracer().startSpan(name, { kind: SpanKind.INTERNAL, attributes, root: true });
  try {
    return await inSpan(span, () => fn(span));
  } catch (err) {
    failSpan(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/**
 * The active trace's `traceparent` (and `tracestate`) into the headers of an outgoing call (an upstream model,
 * Qdrant, a web search or fetch, a remote MCP server). Call only when TRACING.on.
 */
export function injectTraceContext(headers: Record<string, string>): Record<string, string> {
  propagation.inject(context.active(), headers);
  return headers;
}

/** A fetch whose every request carries the active trace (a remote MCP server's transport). */
export function withTraceContext<Url>(
  fetch: (url: Url, init?: RequestInit) => Promise<Response>,
): (url: Url, init?: RequestInit) => Promise<Response> {
  return (input, init) => {
    const headers = new Headers(init?.headers);
    for (const [name, value] of Object.entries(injectTraceContext({}))) headers.set(name, value);
    return fetch(input, { ...init, headers });
  };
}
