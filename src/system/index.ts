export { closeInOrder } from './close-in-order.js';
export { Lifecycle } from './lifecycle.js';
export { systemOperations } from './operations.js';
