export { type ClosingPart, closeInOrder } from './close-in-order.js';
export { Lifecycle } from './lifecycle.js';
export { type DependencyCheck, type SystemDeps, systemOperations } from './operations.js';
