export { vectorStoresCapability } from './capability.js';
