export { requestTracing } from './request-spans.js';
export { startTracing, tracingConfigured } from './sdk.js';
export {
  type Attributes,
  failSpan,
  injectTraceContext,
  inSpan,
  type Span,
  SpanKind,
  startSpan,
  traced,
  tracedJob,
  withTraceContext,
} from './spans.js';
export { TRACING } from './switch.js';
