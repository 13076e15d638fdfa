export { AppError, type ErrorBody, type ErrorDetails, errorBody } from './app-error.js';
export { ERROR_STATUS, type ErrorCode, statusOf } from './codes.js';
