export { systemCapability } from './capability.js';
export { closeInOrder } from './close-in-order.js';
export { Lifecycle } from './lifecycle.js';
export { SERVED_PREFIXES } from './path-aliases.js';
