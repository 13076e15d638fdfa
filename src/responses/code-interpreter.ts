import { AppError } from '../errors/index.js';
import type { ToolDefinition } from '../providers/index.js';
import type { CodeRunner } from '../sandbox/index.js';

/** The function the model calls to run code: `code_interpreter` is served by pvai's sandbox. */
export const CODE_TOOL_NAME = 'code_interpreter';

export const CODE_TOOL: ToolDefinition = {
  type: 'function',
  function: {
    name: CODE_TOOL_NAME,
    description:
      'Runs Python 3 code in a sandbox (no network, no files kept) and returns what it prints. Use it to compute, to check, and for anything that must be exact.',
    parameters: {
      type: 'object',
      properties: { code: { type: 'string', description: 'Python 3 code; print what you need to see.' } },
      required: ['code'],
      additionalProperties: false,
    },
  },
};

export interface CodeRun {
  code: string;
  /** What the code printed, then its error (a traceback) if it failed. */
  logs: string;
  status: 'completed' | 'failed' | 'incomplete';
}

/** The code a call carries: its `code` argument, or the arguments themselves when they are not JSON. */
export function codeOf(args: string): string {
  try {
    const parsed = JSON.parse(args) as { code?: unknown };
    return typeof parsed.code === 'string' ? parsed.code : args;
  } catch {
    return args;
  }
}

/**
 * Runs a call's code in the sandbox with the tier's timeout. A failure of the code, a timeout, or a sandbox
 * that cannot run it (no bubblewrap, every slot busy) is the run's outcome, for the model to read and the
 * client to see in the item; only the client leaving stops the response.
 */
export async function runCode(
  sandbox: CodeRunner,
  code: string,
  limits: { timeoutSeconds: number; accountId: string },
  signal: AbortSignal,
): Promise<CodeRun> {
  let outcome: Awaited<ReturnType<CodeRunner['execute']>>;
  try {
    outcome = await sandbox.execute(
      { code, timeoutSeconds: limits.timeoutSeconds, accountId: limits.accountId },
      signal,
    );
  } catch (err) {
    if (!(err instanceof AppError) || signal.aborted) throw err;
    return { code, logs: `[the code did not run: ${err.message}]`, status: 'failed' };
  }
  if (outcome.kind === 'timeout') {
    return {
      code,
      logs: `${outcome.output}\n[timed out after ${limits.timeoutSeconds} s]`.trim(),
      status: 'incomplete',
    };
  }
  const logs = outcome.error ? `${outcome.output}${outcome.error}` : outcome.output;
  return { code, logs, status: outcome.error ? 'failed' : 'completed' };
}
