import { type SystemDeps, systemOperations } from './operations.js';

/** Liveness, readiness (every dependency checked) and the API reference page. */
export function systemCapability(deps: SystemDeps) {
  return { name: 'system', operations: systemOperations(deps) };
}
