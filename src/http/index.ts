/**
 * The HTTP layer: Koa, openapi-backend routing and validation against the contract, security, the
 * limiter hook and the error mapping. It knows no capability: the composition root gives it the
 * operations (operationId → handler) and the ports it needs (HttpPorts).
 */
export { createApp, createOpenApi } from './app.js';
export { jsonBody } from './body.js';
export { ClientDisconnectedError, requirePrincipal } from './call.js';
export {
  ConnectionLimits,
  connectionCaps,
  type RequestObserver,
  readFdLimit,
} from './connection-limits.js';
export { loadContract } from './document.js';
export { endUserOf, requiredEndUserOf } from './end-user.js';
export { jsonStream, type Streamed } from './json-stream.js';
export { readMultipart } from './multipart.js';
export { contractBackend, openApiRequest, useIndexedRouter } from './openapi.js';
export type {
  Operation,
  OperationRequest,
  Operations,
  Reply,
  RequestBody,
  Schema,
} from './operation.js';
export { checkOperationInput } from './operation-input.js';
export type {
  ExtraRoutes,
  HttpPorts,
  IdempotencyPort,
  IdempotentClaim,
  IdempotentRequest,
  RequestOutcome,
  RequestRecord,
  RequestTracing,
  ServerSpan,
  StoredAnswer,
} from './ports.js';
/** The WebSocket mode's types: routes, sessions, handlers and what they hold. */
export type * from './socket-types.js';
export { sseWriter } from './sse.js';
export { identifierProblem, invalidText, jsonTextProblem } from './text.js';
export { applyServerTimeouts } from './timeouts.js';
export type { Call, RequestContent, StreamedUpload, Upload, UploadPart, UsageNote } from './types.js';
export { isWebSocketUpgrade, upgradeRequests } from './upgrade.js';
