export { type DependencyCheck, type SystemDeps, systemOperations } from './operations.js';
