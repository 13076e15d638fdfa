import { SpanKind, TRACING, traced } from '../tracing/index.js';
import type { CodeRunner } from './types.js';

/**
 * The runner with a span per execution (`sandbox run`): the language, how it ended (`completed`, `timeout`; a
 * refusal or failure to run is the span's error), whether the code raised, and its time in the sandbox. The code
 * goes in only with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true; its output never. Wrapped by engines.ts
 * only when TRACING.on.
 */
export function tracedSandbox(runner: CodeRunner): CodeRunner {
  return {
    execute(request, signal) {
      const attributes: Record<string, string | number> = {
        'pvai.sandbox.language': 'python',
        'pvai.sandbox.timeout_seconds': request.timeoutSeconds,
      };
      if (TRACING.content) attributes['pvai.sandbox.code'] = request.code;
      return traced(
        'sandbox run',
        attributes,
        async (span) => {
          const outcome = await runner.execute(request, signal);
          span.setAttribute('pvai.sandbox.outcome', outcome.kind);
          span.setAttribute('pvai.sandbox.raised', outcome.kind === 'completed' && outcome.error !== null);
          span.setAttribute('pvai.sandbox.execution_ms', outcome.executionTimeMs);
          return outcome;
        },
        SpanKind.INTERNAL,
      );
    },
    health: () => runner.health(),
    queueState: () => runner.queueState(),
    close: () => runner.close(),
  };
}
