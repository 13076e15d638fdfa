export { plannedOperations } from './operations.js';
