export { AppError, errorBody } from './app-error.js';
export { ERROR_STATUS, statusOf } from './codes.js';
export {
  asAppError,
  EngineAwayError,
  engineAwayError,
  engineAwayOf,
} from './engine-away.js';
