import { AppError } from '../errors/index.js';
import { bodyOf, clientDisconnectSignal, json, type OperationHandlers, requirePrincipal } from '../http/handler.js';
import type { Services } from '../http/services.js';

interface CodeRequest {
  code: string;
  user_id: string;
  timeout?: number;
}

/** The tier's timeout rules of decisions.md: omitted → the default; above the maximum → 400. */
export function resolveTimeout(request: CodeRequest, max: number, fallback: number): number {
  if (request.timeout === undefined) return fallback;
  if (request.timeout > max) {
    throw new AppError('TIMEOUT_EXCEEDS_TIER', `timeout is at most ${max} s on this tier`, { field: 'timeout', max });
  }
  return request.timeout;
}

export function codeHandlers(services: Services): OperationHandlers {
  return {
    executeCode: async (c, ctx) => {
      const { account } = requirePrincipal(ctx);
      const rules = services.config.tiers[account.tier];
      const request = bodyOf<CodeRequest>(c);
      const timeout = resolveTimeout(request, rules.codeTimeoutMaxSeconds, rules.codeTimeoutDefaultSeconds);
      // Code execution costs 0 credits (decisions.md).
      ctx.set('X-Credits-Charged', '0');
      const outcome = await services.sandbox.execute(
        { code: request.code, timeoutSeconds: timeout, accountId: account.id },
        clientDisconnectSignal(ctx),
      );
      if (outcome.kind === 'timeout') {
        throw new AppError('EXECUTION_TIMEOUT', `Execution timed out after ${timeout} s`, {
          timeout,
          output: outcome.output,
        });
      }
      json(ctx, 200, {
        output: outcome.output,
        error: outcome.error,
        execution_time_ms: Math.round(outcome.executionTimeMs),
      });
    },
  };
}
