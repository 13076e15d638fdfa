import { AppError } from '../errors/index.js';
import { type Call, type Operations, requirePrincipal } from '../http/index.js';
import type { TierPolicy } from '../tiers/index.js';
import type { Accounting, ResponsesService } from './responses-service.js';
import type { ResponseStore } from './types.js';

type ResponseOperationId =
  | 'createResponse'
  | 'getResponse'
  | 'deleteResponse'
  | 'listResponseInputItems'
  | 'cancelResponse'
  | 'compactResponse';

/** The usage row of a response: credits and tokens of all its model calls, as a chat completion's. */
function note(call: Call, accounting: Accounting): Record<string, string> {
  call.usage.credits = accounting.credits;
  call.usage.cached = accounting.cache === 'HIT';
  if (accounting.cache !== 'HIT') {
    call.usage.promptTokens = accounting.totals.input;
    call.usage.completionTokens = accounting.totals.output;
  }
  return { 'X-Cache': accounting.cache, 'X-Credits-Charged': String(accounting.credits) };
}

/** file_search's `max_num_results` within the tier's `rag_k`: the refusal names the request's own field. */
function checkResults(
  tiers: TierPolicy,
  account: Parameters<TierPolicy['checkRagK']>[0],
  k: number,
  tools: ReadonlyArray<{ type: string }>,
): void {
  try {
    tiers.checkRagK(account, k);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    const field = `tools[${tools.findIndex((t) => t.type === 'file_search')}].max_num_results`;
    throw new AppError(err.code, err.message.replace('rag_k', 'max_num_results'), { ...err.details, field });
  }
}

/**
 * /z1/responses: the tier's rules (the model, file_search's results within `rag_k`, the sandbox's timeout),
 * then the responses service; stored responses are the account's, as OpenAI's clients name no end user when
 * they read or delete one.
 */
export function responseOperations(deps: {
  responses: ResponsesService;
  store: ResponseStore;
  tiers: TierPolicy;
}): Operations<ResponseOperationId> {
  const stored = async (call: Call, id: string) => {
    const principal = requirePrincipal(call);
    const found = await deps.store.get(principal.account.id, id);
    // Through a key bound to an end user, another end user's response is as absent as another account's.
    const bound = principal.key.userId;
    if (!found || (bound !== null && found.tenant.userId !== bound))
      throw new AppError('NOT_FOUND', `No response ${id}`);
    call.usage.userId = found.tenant.userId;
    return found;
  };
  return {
    createResponse: async ({ body }, call) => {
      const principal = requirePrincipal(call);
      deps.tiers.checkModel(principal.account, body.model);
      call.usage.model = body.model;
      const prepared = await deps.responses.prepare(principal, body, {
        codeTimeoutSeconds: deps.tiers.codeTimeout(principal.account, undefined),
      });
      if (body.background === true) {
        throw new AppError('INVALID_PARAMETER', 'background is not available yet', { field: 'background' });
      }
      call.usage.userId = prepared.tenant.userId;
      const search = prepared.plan.builtIns.fileSearch;
      if (search) checkResults(deps.tiers, principal.account, search.k, body.tools ?? []);
      if (body.stream) {
        const started = await deps.responses.stream(principal, prepared, call.disconnectSignal());
        call.usage.firstTokenAt = performance.now();
        const headers = note(call, started.accounting);
        const finished = started.done.then((outcome) => {
          // Credits and tokens of the calls after the first are known only now: the usage row says them.
          note(call, started.accounting);
          if (outcome.clientClosed) call.usage.clientClosed = true;
          if (outcome.failed) {
            call.usage.failedStatus = outcome.failed.status;
            call.log.warn({ code: outcome.failed.code, err: outcome.cause }, 'response stream ended with an error');
          }
        });
        return {
          status: 200,
          type: 'text/event-stream',
          headers: { ...headers, 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' },
          stream: started.out,
          finished,
        };
      }
      const { body: response, accounting } = await deps.responses.complete(
        principal,
        prepared,
        call.disconnectSignal(),
      );
      call.usage.firstTokenAt = performance.now();
      return { status: 200, headers: note(call, accounting), body: response };
    },
    getResponse: async ({ params }, call) => ({ status: 200, body: (await stored(call, params.response_id)).body }),
    deleteResponse: async ({ params }, call) => {
      const { account } = requirePrincipal(call);
      await stored(call, params.response_id);
      await deps.store.delete(account.id, params.response_id);
      return { status: 200, body: { id: params.response_id, object: 'response', deleted: true } };
    },
    cancelResponse: async ({ params }, call) => {
      await stored(call, params.response_id);
      throw new AppError('INVALID_PARAMETER', 'Only background responses can be cancelled', { field: 'response_id' });
    },
    compactResponse: async () => {
      throw new AppError('NOT_FOUND', 'No such endpoint');
    },
    listResponseInputItems: async ({ params, query }, call) => {
      const response = await stored(call, params.response_id);
      const ordered = query.order === 'asc' ? response.input : [...response.input].reverse();
      const start = query.after ? ordered.findIndex((i) => i.id === query.after) + 1 : 0;
      if (query.after && start === 0)
        throw new AppError('NOT_FOUND', `No input item ${query.after} in ${params.response_id}`);
      const limit = query.limit ?? 20;
      const page = ordered.slice(start, start + limit);
      return {
        status: 200,
        body: {
          object: 'list',
          data: page.map((i) => ({ ...i.item, id: i.id, type: (i.item.type as string | undefined) ?? 'message' })),
          first_id: page[0]?.id ?? null,
          last_id: page.at(-1)?.id ?? null,
          has_more: start + limit < ordered.length,
        },
      };
    },
  };
}
