export { AppError, type ErrorBody, type ErrorDetails, errorBody } from './app-error.js';
export { ERROR_STATUS, type ErrorCode, statusOf } from './codes.js';
export {
  asAppError,
  ENGINE_RETRY_AFTER_S,
  type Engine,
  EngineAwayError,
  engineAwayError,
  engineAwayOf,
} from './engine-away.js';
