/**
 * The HTTP layer: Koa, openapi-backend routing and validation against the contract, security, the
 * limiter hook and the error mapping. It knows no capability: the composition root gives it the
 * operations (operationId → handler) and the ports it needs (HttpPorts).
 */
export { createApp, createOpenApi } from './app.js';
export { type BodyLimits, jsonBody } from './body.js';
export { CLIENT_CLOSED_REQUEST, ClientDisconnectedError, requirePrincipal, STREAM_STALLED } from './call.js';
export {
  type ConnectionCaps,
  ConnectionLimits,
  type ConnectionSettings,
  connectionCaps,
  type RequestObserver,
  readFdLimit,
  type UpgradeListener,
} from './connection-limits.js';
export { loadContract, projectRoot } from './document.js';
export { DEFAULT_END_USER, endUserOf, requiredEndUserOf } from './end-user.js';
export { toAppError } from './error-middleware.js';
export { jsonStream, type Streamed } from './json-stream.js';
export { contractBackend, openApiRequest, useIndexedRouter } from './openapi.js';
export type {
  JsonStreamReply,
  Operation,
  OperationId,
  OperationRequest,
  Operations,
  Reply,
  RequestBody,
  Schema,
  StreamReply,
} from './operation.js';
export { checkOperationInput, type OperationInput } from './operation-input.js';
export type {
  Admission,
  ConnectionEvents,
  ConnectionScope,
  ExtraRoutes,
  HttpPorts,
  RequestRecord,
} from './ports.js';
export type {
  HeldSocket,
  MessageCall,
  SocketHandler,
  SocketObserver,
  SocketSession,
  UpgradeRoute,
} from './socket-types.js';
export { identifierProblem, invalidText, jsonTextProblem, type TextProblem } from './text.js';
export { applyServerTimeouts, type ServerTimeouts } from './timeouts.js';
export type { Call, Upload, UsageNote } from './types.js';
export { isWebSocketUpgrade, type UpgradeOptions, upgradeRequests } from './upgrade.js';
