/**
 * Whether this process traces, read at every call site as one property of one object: when off (no exporter
 * configured) a call site costs that check and nothing else — no span, no attribute object, no closure.
 * Set by `startTracing` (sdk.ts) and cleared by its shutdown; one process has one OpenTelemetry SDK.
 */
export const TRACING = {
  on: false,
  /**
   * Whether prompts, answers and tool arguments may go into span attributes:
   * `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`, the GenAI instrumentations' switch. Off by default.
   */
  content: false,
};
