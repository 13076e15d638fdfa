import { AppError } from '../errors/index.js';
import { endUserOf, type Operations, requirePrincipal } from '../http/index.js';
import type { CodeRunner } from '../sandbox/index.js';
import type { TierPolicy } from '../tiers/index.js';

const FREE = { 'X-Credits-Charged': '0' };

/** POST /z1/code/execute: Python in the sandbox, with the tier's timeout rules. Costs 0 credits (docs/decisions.md). */
export function codeOperations(deps: { sandbox: CodeRunner; tiers: TierPolicy }): Operations<'executeCode'> {
  return {
    executeCode: async ({ body }, call) => {
      const principal = requirePrincipal(call);
      const { account } = principal;
      call.usage.userId = endUserOf(principal, body.user_id);
      const timeout = deps.tiers.codeTimeout(account, body.timeout);
      const outcome = await deps.sandbox.execute(
        { code: body.code, timeoutSeconds: timeout, accountId: account.id },
        call.disconnectSignal(),
      );
      if (outcome.kind === 'timeout') {
        throw new AppError(
          'EXECUTION_TIMEOUT',
          `Execution timed out after ${timeout} s`,
          { timeout, output: outcome.output },
          FREE,
        );
      }
      return {
        status: 200,
        headers: FREE,
        body: {
          output: outcome.output,
          error: outcome.error,
          execution_time_ms: Math.round(outcome.executionTimeMs),
        },
      };
    },
  };
}
