import { AppError } from '../errors/index.js';
import type { UsageNote } from '../http/index.js';
import type { Principal } from '../kernel/index.js';
import { checkKeyModel, type TierPolicy } from '../tiers/index.js';
import type { PreparedResponse } from './prepare.js';
import type { Accounting, ResponsesService } from './responses-service.js';
import type { LocalResponses, ResponseCreateBody, ResponseCreateRequest } from './types.js';

/** The usage row of a response: credits and tokens of all its model calls, as a chat completion's. */
export function noteAccounting(usage: UsageNote, accounting: Accounting): Record<string, string> {
  usage.credits = accounting.credits;
  usage.cached = accounting.cache === 'HIT';
  if (accounting.cache !== 'HIT') {
    usage.promptTokens = accounting.totals.input;
    usage.completionTokens = accounting.totals.output;
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
    throw new AppError(
      err.code,
      err.message.replace('rag_k', 'max_num_results'),
      { ...err.details, field },
      {},
      { cause: err },
    );
  }
}

/**
 * What every way of creating a response checks before it runs (POST /z1/responses, a WebSocket's
 * `response.create`): the tier's rules (the model, file_search's results within `rag_k`, the sandbox's
 * timeout) around the request read by `prepare`; the model and the end user noted for the usage row.
 */
export async function prepareCreate(
  deps: { responses: ResponsesService; tiers: TierPolicy },
  principal: Principal,
  request: ResponseCreateRequest,
  usage: UsageNote,
  local?: LocalResponses,
): Promise<PreparedResponse> {
  // An alias (`gpt-4o-mini`) is its PV model from here on: rules, credits, routing and the response's `model`.
  const body: ResponseCreateBody = { ...request, model: deps.tiers.names.chat(request.model) };
  deps.tiers.checkModel(principal.account, body.model);
  checkKeyModel(principal.key, body.model);
  usage.model = body.model;
  const prepared = await deps.responses.prepare(principal, body, {
    codeTimeoutSeconds: deps.tiers.codeTimeout(principal.account, undefined),
    local,
  });
  usage.userId = prepared.tenant.userId;
  const search = prepared.plan.builtIns.fileSearch;
  if (search) checkResults(deps.tiers, principal.account, search.k, body.tools ?? []);
  return prepared;
}
