import type { CodeRunner } from '../sandbox/index.js';
import type { TierPolicy } from '../tiers/index.js';
import { codeOperations } from './operations.js';

/** `POST /z1/code/execute`: Python in the sandbox, for the tiers that have it. */
export function codeCapability(deps: { sandbox: CodeRunner; tiers: TierPolicy }) {
  return { name: 'code', operations: codeOperations(deps) };
}
