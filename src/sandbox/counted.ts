import type { CodeRunner, ExecutionOutcome } from './types.js';

/** How an execution ended, as it is counted: its outcome, or `error` when it was refused or failed to run. */
export type ExecutionCount = ExecutionOutcome['kind'] | 'error';

/** The runner, each execution told to `count` as it ends (the metrics count them by outcome). */
export function countingExecutions(runner: CodeRunner, count: (outcome: ExecutionCount) => void): CodeRunner {
  return {
    async execute(request, signal) {
      try {
        const outcome = await runner.execute(request, signal);
        count(outcome.kind);
        return outcome;
      } catch (err) {
        count('error');
        throw err;
      }
    },
    health: () => runner.health(),
    queueState: () => runner.queueState(),
    close: () => runner.close(),
  };
}
