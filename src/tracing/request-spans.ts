import {
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_URL_PATH,
} from '@opentelemetry/semantic-conventions';
import type { RequestOutcome, RequestTracing, ServerSpan } from '../http/index.js';

/** A request's server span and the context that holds it (what the request's stages run in). */
class RequestSpan implements ServerSpan {
  readonly #span: Span;
  readonly #context: Context;

  constructor(span: Span, parent: Context) {
    this.#span = span;
    this.#context = trace.setSpan(parent, span);
  }

  get traceId(): string {
    return this.#span.spanContext().traceId;
  }

  run<T>(fn: () => T): T {
    return context.with(this.#context, fn);
  }

  end(outcome: RequestOutcome): void {
    const span = this.#span;
    if (outcome.operationId !== undefined) {
      span.updateName(outcome.operationId);
      span.setAttribute('pvai.operation_id', outcome.operationId);
    }
    if (outcome.route !== undefined) span.setAttribute(ATTR_HTTP_ROUTE, outcome.route);
    if (outcome.accountId !== undefined) span.setAttribute('pvai.account_id', outcome.accountId);
    span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, outcome.status);
    if (outcome.errorCode !== undefined) span.setAttribute(ATTR_ERROR_TYPE, outcome.errorCode);
    // A server span is an error for the server's faults only: a refused request is the client's (HTTP semconv).
    if (outcome.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  }
}

/**
 * HttpPorts.tracing: a server span per request, continuing the trace of its incoming W3C `traceparent` and
 * `tracestate` (a new trace without them), named by the method until the request is routed, then by its
 * operationId. Its attributes: `http.request.method`, `url.path` (no query: secrets travel there), and at its end
 * `http.route`, `http.response.status_code`, `pvai.operation_id`, `pvai.account_id` (never the key) and
 * `error.type` (the error body's code).
 */
export function requestTracing(): RequestTracing {
  return {
    start(method, path, headers) {
      const parent = propagation.extract(ROOT_CONTEXT, headers);
      const span = trace
        .getTracer('pvai')
        .startSpan(
          method,
          { kind: SpanKind.SERVER, attributes: { [ATTR_HTTP_REQUEST_METHOD]: method, [ATTR_URL_PATH]: path } },
          parent,
        );
      return new RequestSpan(span, parent);
    },
  };
}
