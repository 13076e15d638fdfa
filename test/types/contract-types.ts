/**
 * Compile-time proof that the contract reaches the handlers: `tsc --noEmit` (npm run typecheck) checks
 * this file, and every `@ts-expect-error` below must stay an error. If the operation types went loose
 * (any, unknown, a hand-written copy), the directive would be unused and tsc would fail.
 * Nothing here runs.
 */
import type { Operation, OperationRequest, Reply } from '../../src/http/index.js';

// A right reply compiles.
export const health: Operation<'getHealth'> = () => ({
  status: 200,
  body: { status: 'ok', version: '0.1.0', interface_version: '2.0.0' },
});

export const wrongStatus: Operation<'getHealth'> = () => ({
  // @ts-expect-error: a status the document does not list for the operation.
  status: 201,
  body: { status: 'ok', version: '0.1.0', interface_version: '2.0.0' },
});

export const wrongFieldType: Operation<'getHealth'> = () => ({
  status: 200,
  // @ts-expect-error: a body field of the wrong type.
  body: { status: 'ok', version: 2, interface_version: '2.0.0' },
});

export const missingField: Operation<'getModel'> = () => ({
  status: 200,
  // @ts-expect-error: a required field (credits_per_request, …) is missing.
  body: { id: 'PV-TURBO', object: 'model', created: 0, owned_by: 'pvai' },
});

export const unknownCapability: Reply<'getModel'> = {
  status: 200,
  body: {
    id: 'PV-TURBO',
    object: 'model',
    created: 0,
    owned_by: 'pvai',
    speed_class: 'fast',
    quality: 'good',
    credits_per_request: 1,
    intended_use: 'chat',
    available: true,
    kind: 'chat',
    context_window: 2048,
    max_output_tokens: 256,
    served_by: { kind: 'local', model: 'SmolLM2-135M-Instruct', host: null, note: 'small local model' },
    // @ts-expect-error: a capability outside the contract's enum.
    capabilities: ['telepathy'],
  },
};

export const errorAsReply: Reply<'getModel'> = {
  // @ts-expect-error: 404 is an error response of getModel: thrown as AppError, never returned.
  status: 404,
  body: {
    id: 'PV-TURBO',
    object: 'model',
    created: 0,
    owned_by: 'pvai',
    speed_class: 'fast',
    quality: 'good',
    credits_per_request: 1,
    intended_use: 'chat',
    available: true,
    kind: 'chat',
    context_window: 2048,
    max_output_tokens: 256,
    served_by: { kind: 'local', model: 'SmolLM2-135M-Instruct', host: null, note: 'small local model' },
    capabilities: ['streaming'],
  },
};

export function readsRequest(request: OperationRequest<'createChatCompletion'>): string {
  // @ts-expect-error: a field the request schema does not have.
  const nope: unknown = request.body.not_a_field;
  // @ts-expect-error: user_id is a string, not a number.
  const id: number = request.body.user_id;
  return `${String(nope)}${id}${request.body.model}`;
}

export function readsParams(request: OperationRequest<'getModel'>): string {
  // @ts-expect-error: getModel's path parameter is model_id.
  const wrong: string = request.params.id;
  return `${wrong}${request.params.model_id}`;
}

export const streamWhereJson: Reply<'getHealth'> = {
  status: 200,
  // @ts-expect-error: a stream is only a reply where the document has text/event-stream.
  type: 'text/event-stream',
  stream: undefined,
  finished: Promise.resolve(),
};

async function* nothing(): AsyncGenerator<never> {}
async function* wrongUsage() {
  yield { request_id: 7 };
}

// A JSON body may be streamed where the document has JSON: its lists as async iterables of their items.
export const streamedExport: Reply<'exportUserData'> = {
  status: 200,
  streamed: {
    object: 'user.export',
    user_id: 'u',
    exported_at: '2026-11-23T08:00:00.000Z',
    memories: nothing(),
    documents: [],
    responses: [],
    files: [],
    vector_stores: [],
    request_logs: [],
    idempotent_requests: [],
    conversations: [],
    usage: nothing(),
  },
};

export const streamedWrongItems: Reply<'exportUserData'> = {
  status: 200,
  streamed: {
    object: 'user.export',
    user_id: 'u',
    exported_at: '2026-11-23T08:00:00.000Z',
    memories: nothing(),
    documents: [],
    responses: [],
    conversations: [],
    // @ts-expect-error: items of the wrong shape (request_id is a string, and the rest is missing).
    usage: wrongUsage(),
  },
};

export const streamedMissingList: Reply<'exportUserData'> = {
  status: 200,
  // @ts-expect-error: a list the document requires (documents) is missing.
  streamed: { object: 'user.export', user_id: 'u', exported_at: '2026-11-23T08:00:00.000Z', memories: [], usage: [] },
};
