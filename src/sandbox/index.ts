/**
 * Sandbox for untrusted Python: every execution runs in its own bubblewrap container (new user, pid,
 * net, ipc and uts namespaces; read-only /usr; private size-capped tmpfs; rlimits) and is killed
 * afterwards. See docs/sandbox.md for the design and its limits.
 */
import { SandboxRunner } from './runner.js';
import type { CodeRunner, SandboxConfig } from './types.js';

export { countingExecutions } from './counted.js';
export { tracedSandbox } from './traced.js';
export {
  type CodeRunner,
  DEFAULT_SANDBOX_CONFIG,
  type ExecutionOutcome,
  type SandboxConfig,
} from './types.js';

/** Creates the runner and starts warming its pool. Throws only for invalid config; host problems surface on use. */
export function createSandbox(config?: Partial<SandboxConfig>): CodeRunner {
  return new SandboxRunner(config);
}
