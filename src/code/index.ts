/** Code execution: the operation in front of the sandbox engine (src/sandbox). */

export { codeCapability } from './capability.js';
