import { AppError } from '../errors/index.js';
import { bodyOf, type OperationHandlers, requirePrincipal } from '../http/handler.js';
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
    executeCode: (c, ctx) => {
      const { account } = requirePrincipal(ctx);
      const rules = services.config.tiers[account.tier];
      resolveTimeout(bodyOf<CodeRequest>(c), rules.codeTimeoutMaxSeconds, rules.codeTimeoutDefaultSeconds);
      throw new AppError('SERVICE_UNAVAILABLE', 'Code execution is not available on this server yet');
    },
  };
}
