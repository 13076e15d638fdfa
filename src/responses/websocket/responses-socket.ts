import { AppError } from '../../errors/index.js';
import type { MessageCall, SocketHandler, SocketSession, UpgradeRoute } from '../../http/index.js';
import type { TierPolicy } from '../../tiers/index.js';
import { noteAccounting, prepareCreate } from '../create-checks.js';
import type { EventSink } from '../events.js';
import type { ResponsesService } from '../responses-service.js';
import type { ResponseCreateRequest } from '../types.js';
import { SocketResponses } from './local-responses.js';

export interface ResponsesSocketDeps {
  responses: ResponsesService;
  tiers: TierPolicy;
}

/** The path of WebSocket mode: the same as POST /z1/responses (Open Responses, OpenAI's `ResponsesWS`). */
const RESPONSES_SOCKET_PATH = '/z1/responses';

/**
 * WebSocket mode of the Responses API (the contract's `x-websocket` on /z1/responses): each `response.create`
 * message is POST /z1/responses answered with its events, each event a JSON text message, exactly the objects
 * its Server-Sent Events carry. The HTTP layer has admitted and will record the message (http/socket-session.ts);
 * this answers it: the message read (`type` taken off, the rest validated as the request body; `stream` ignored,
 * `background` refused), the checks POST makes (`prepareCreate`), then the response run into the socket.
 */
export function responsesSocket(deps: ResponsesSocketDeps): UpgradeRoute<'createResponse'> {
  return {
    path: RESPONSES_SOCKET_PATH,
    operationId: 'createResponse',
    open: (session) => new ResponsesSocket(deps, session),
  };
}

const answered = (status: string | undefined) => status === 'completed' || status === 'incomplete';

/** One socket: its `store: false` responses, and its messages, which the HTTP layer hands over one at a time. */
class ResponsesSocket implements SocketHandler<'createResponse'> {
  readonly #deps: ResponsesSocketDeps;
  readonly #session: SocketSession;
  readonly #local = new SocketResponses();
  readonly #sink: EventSink;

  constructor(deps: ResponsesSocketDeps, session: SocketSession) {
    this.#deps = deps;
    this.#session = session;
    this.#sink = { write: (event) => session.send(JSON.stringify(event)) };
  }

  async message(json: unknown, call: MessageCall<'createResponse'>): Promise<void> {
    const body = this.#read(json, call);
    // A continuation that fails, refused or ended `failed`, leaves no state to build on: the previous response
    // is forgotten, and a retry of it is previous_response_not_found.
    const previous = body.previous_response_id ?? undefined;
    let failed = true;
    try {
      failed = !(await this.#create(body, call));
    } finally {
      if (failed && previous) this.#local.evict(previous);
    }
  }

  /** `type: response.create` and a request body as POST takes it. */
  #read(json: unknown, call: MessageCall<'createResponse'>): ResponseCreateRequest {
    if (typeof json !== 'object' || json === null || Array.isArray(json)) {
      throw new AppError('INVALID_PARAMETER', 'A message is a JSON object: {"type": "response.create", …}', {
        field: 'body',
        reason: 'must be object',
      });
    }
    const { type, ...fields } = json as Record<string, unknown>;
    if (type !== 'response.create') {
      throw new AppError('INVALID_PARAMETER', 'type must be response.create', {
        field: 'type',
        reason: 'must be one of response.create',
      });
    }
    const body = call.body(fields);
    if (body.background === true) {
      throw new AppError(
        'INVALID_PARAMETER',
        'background is not taken over a WebSocket: the events are the answer; POST /z1/responses runs it in the background',
        { field: 'background', reason: 'not taken over a WebSocket' },
      );
    }
    return body;
  }

  /** The response run into the socket; false when it ended `failed`. */
  async #create(body: ResponseCreateRequest, call: MessageCall<'createResponse'>): Promise<boolean> {
    const { principal } = this.#session;
    const prepared = await prepareCreate(this.#deps, principal, body, call.usage, this.#local);
    const signal = call.disconnectSignal();
    const started = await this.#deps.responses.run(principal, prepared, signal, this.#sink);
    call.usage.firstTokenAt = performance.now();
    noteAccounting(call.usage, started.accounting);
    const outcome = await started.done;
    // Credits and tokens of the calls after the first are known only now.
    noteAccounting(call.usage, started.accounting);
    if (outcome.clientClosed) {
      // The server's stop ended the work (its 503 is the answer on a socket still open), or the client left.
      if (signal.reason instanceof AppError) throw signal.reason;
      call.usage.clientClosed = true;
      return false;
    }
    if (outcome.failed) {
      call.usage.failedStatus = outcome.failed.status;
      call.usage.errorCode = outcome.failed.code;
      call.log.warn({ code: outcome.failed.code, err: outcome.cause }, 'websocket response ended with an error');
      return false;
    }
    if (body.store === false && outcome.record && answered(outcome.body?.status)) this.#local.keep(outcome.record);
    return true;
  }
}
