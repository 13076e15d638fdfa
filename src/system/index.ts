export { Lifecycle } from './lifecycle.js';
export { type DependencyCheck, type SystemDeps, systemOperations } from './operations.js';
