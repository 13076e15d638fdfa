export { mcpCapability } from './capability.js';
