import { AppError } from '../errors/index.js';
import { type Call, type Operations, type RequestContent, requirePrincipal } from '../http/index.js';
import { conversationText } from '../logs/index.js';
import { checkKeyModel, type TierPolicy } from '../tiers/index.js';
import type { BackgroundResponses } from './background/background.js';
import { cancelStored, createInBackground, followStored } from './background/replies.js';
import { chainItems } from './chain.js';
import type { ResponseCompactor } from './compact.js';
import { noteAccounting, prepareCreate } from './create-checks.js';
import type { ResponsesService } from './responses-service.js';
import type { ResponseStore } from './types.js';

type ResponseOperationId =
  | 'createResponse'
  | 'getResponse'
  | 'deleteResponse'
  | 'listResponseInputItems'
  | 'cancelResponse'
  | 'compactResponse';

/**
 * /z1/responses: the tier's rules (the model, file_search's results within `rag_k`, the sandbox's timeout),
 * then the responses service; stored responses are the account's, as OpenAI's clients name no end user when
 * they read or delete one.
 */
export function responseOperations(deps: {
  responses: ResponsesService;
  compactor: ResponseCompactor;
  store: ResponseStore;
  tiers: TierPolicy;
  background: BackgroundResponses;
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
      const prepared = await prepareCreate(deps, principal, body, call.usage);
      // The text is kept only for an account that asked (off by default): its input now, its output at the end.
      const content: RequestContent | undefined = principal.account.logContent
        ? { input: conversationText(body.input), output: null }
        : undefined;
      call.usage.content = content;
      if (body.background === true) {
        return createInBackground(deps.background, principal, prepared, body.stream === true, call);
      }
      if (body.stream) {
        const started = await deps.responses.stream(principal, prepared, call.disconnectSignal());
        call.usage.firstTokenAt = performance.now();
        const headers = noteAccounting(call.usage, started.accounting);
        const finished = started.done.then((outcome) => {
          // Credits and tokens of the calls after the first are known only now: the usage row says them.
          noteAccounting(call.usage, started.accounting);
          if (content && outcome.body) content.output = conversationText(outcome.body.output);
          if (outcome.clientClosed) call.usage.clientClosed = true;
          if (outcome.failed) {
            call.usage.failedStatus = outcome.failed.status;
            call.usage.errorCode = outcome.failed.code;
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
      if (content) content.output = conversationText(response.output);
      return { status: 200, headers: noteAccounting(call.usage, accounting), body: response };
    },
    getResponse: async ({ params, query }, call) => {
      const found = await stored(call, params.response_id);
      // The query's values are checked against the contract but handed over as text.
      if (query.stream === true) return followStored(deps.background, found, query.starting_after, call);
      return { status: 200, body: found.body };
    },
    deleteResponse: async ({ params }, call) => {
      const { account } = requirePrincipal(call);
      await stored(call, params.response_id);
      // A background response still running is cancelled first: nothing of it is written after.
      await deps.background.forget(account.id, params.response_id);
      await deps.store.delete(account.id, params.response_id);
      return { status: 200, body: { id: params.response_id, object: 'response', deleted: true } };
    },
    cancelResponse: async ({ params }, call) =>
      cancelStored(deps.background, await stored(call, params.response_id), call),
    compactResponse: async ({ body: request }, call) => {
      const principal = requirePrincipal(call);
      const body = { ...request, model: deps.tiers.names.chat(request.model) };
      deps.tiers.checkModel(principal.account, body.model);
      checkKeyModel(principal.key, body.model);
      call.usage.model = body.model;
      const { compaction, credits, userId } = await deps.compactor.compact(principal, body, call.disconnectSignal());
      call.usage.userId = userId;
      call.usage.credits = credits;
      call.usage.promptTokens = compaction.usage.input_tokens;
      call.usage.completionTokens = compaction.usage.output_tokens;
      call.usage.firstTokenAt = performance.now();
      return { status: 200, headers: { 'X-Credits-Charged': String(credits) }, body: compaction };
    },
    listResponseInputItems: async ({ params, query }, call) => {
      await stored(call, params.response_id);
      // Its whole context: the items of the responses it continues (those not deleted), then its own input.
      const chain = await deps.store.chain(requirePrincipal(call).account.id, params.response_id);
      const items = chain ? chainItems(chain) : [];
      const ordered = query.order === 'asc' ? items : [...items].reverse();
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
