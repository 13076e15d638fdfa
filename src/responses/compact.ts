import type { ChatService } from '../chat/index.js';
import type { Clock } from '../clock/index.js';
import { AppError } from '../errors/index.js';
import { endUserOf, type RequestBody, type Schema } from '../http/index.js';
import type { ModelId, Principal } from '../kernel/index.js';
import type { ChatMessage } from '../providers/index.js';
import { continueFrom } from './chain.js';
import { sealSummary } from './compaction-item.js';
import { newId, readInput, referencedIds } from './input.js';
import type { ResponseStore, StoredItem } from './types.js';

/** The body of a compaction once its model's name (an id or an alias) is read. */
export type CompactBody = Omit<RequestBody<'compactResponse'>, 'model'> & { model: ModelId };
export type Compaction = Schema<'ResponseCompaction'>;

/** What the model is asked to do with the conversation (its transcript follows as the user turn). */
const INSTRUCTION = [
  'You compact a conversation so that it can be continued later from your notes alone.',
  'Write short notes of everything the conversation established: facts, names, numbers, dates, decisions,',
  "answers given, function calls and their results, and what is still open. Keep the user's own words where they",
  'matter. Add nothing that was not said. Answer with the notes only.',
].join(' ');

export interface CompactorDeps {
  chat: Pick<ChatService, 'complete'>;
  store: ResponseStore;
  clock: Clock;
}

/** A chat message as a line of the transcript the model summarises. */
function transcriptLine(m: ChatMessage): string {
  const text = typeof m.content === 'string' ? m.content : '';
  if (m.role === 'tool') return `Result of call ${m.tool_call_id ?? ''}: ${text}`;
  if (m.role === 'assistant') {
    const calls = (m.tool_calls ?? []).map(
      (c) => `Assistant called ${c.function.name}(${c.function.arguments}) [${c.id}]`,
    );
    return [text ? `Assistant: ${text}` : '', ...calls].filter(Boolean).join('\n');
  }
  return `${m.role === 'system' ? 'Context' : 'User'}: ${text}`;
}

/** A user turn of the stored history, as the message item a later request passes back. */
function userItem(text: string, id = newId('msg')): StoredItem {
  return {
    id,
    item: { id, type: 'message', status: 'completed', role: 'user', content: [{ type: 'input_text', text }] },
  };
}

/** A user message of the input as an output item: its parts as sent (a string is one `input_text` part). */
function asOutputItem(stored: StoredItem): StoredItem {
  const content = stored.item.content;
  if (typeof content === 'string') return userItem(content, stored.id);
  return { id: stored.id, item: { ...stored.item, id: stored.id, type: 'message', status: 'completed' } };
}

/**
 * `POST /z1/responses/compact`: the conversation (a previous response's stored one, then `input`) shortened to the
 * user's messages as sent and one `compaction` item carrying the model's notes of the rest. One model call on the
 * model named, charged as a chat completion; a conversation of user messages only needs none.
 */
export class ResponseCompactor {
  readonly #deps: CompactorDeps;

  constructor(deps: CompactorDeps) {
    this.#deps = deps;
  }

  async compact(
    principal: Principal,
    body: CompactBody,
    signal: AbortSignal,
  ): Promise<{ compaction: Compaction; credits: number; userId: string }> {
    const named = body.user_id ?? body.user ?? body.safety_identifier ?? undefined;
    const field = body.user_id !== undefined ? 'user_id' : body.user != null ? 'user' : 'safety_identifier';
    const tenant = { accountId: principal.account.id, userId: endUserOf(principal, named, field) };
    const kept: StoredItem[] = [];
    let history: ChatMessage[] = [];
    if (body.previous_response_id) {
      history = (await continueFrom(this.#deps.store, tenant, body.previous_response_id)).history;
      for (const m of history) if (m.role === 'user' && typeof m.content === 'string') kept.push(userItem(m.content));
    }
    const input = body.input ?? [];
    const resolved = await this.#deps.store.items(tenant, referencedIds(input));
    const knownCallIds = new Set(history.flatMap((m) => (m.tool_calls ?? []).map((c) => c.id)));
    const read = readInput(input, resolved, { knownCallIds });
    for (const stored of read.items) {
      if (stored.item.type === 'message' && stored.item.role === 'user') kept.push(asOutputItem(stored));
    }
    const conversation = [...history, ...read.messages];
    if (conversation.length === 0) {
      throw new AppError('INVALID_PARAMETER', 'There is nothing to compact: give input or previous_response_id', {
        field: 'input',
        reason: 'is required without previous_response_id',
      });
    }
    const rest = conversation.filter((m) => m.role !== 'user');
    let summary = '';
    let credits = 0;
    const usage = { input: 0, output: 0, cached: 0 };
    if (rest.length > 0) {
      const system = body.instructions ? `${INSTRUCTION}\n\n${body.instructions}` : INSTRUCTION;
      const answer = await this.#deps.chat.complete(
        principal,
        {
          model: body.model,
          user_id: tenant.userId,
          messages: [
            { role: 'system', content: system },
            { role: 'user', content: conversation.map(transcriptLine).filter(Boolean).join('\n') },
          ],
          temperature: 0,
          use_memory: false,
          learn: false,
        },
        signal,
      );
      summary = (answer.completion.text ?? '').trim();
      credits = answer.credits;
      usage.input = answer.completion.usage.promptTokens;
      usage.output = answer.completion.usage.completionTokens;
      if (answer.cache === 'HIT') usage.cached = usage.input;
    }
    const compactionId = newId('cmp');
    return {
      userId: tenant.userId,
      credits,
      compaction: {
        id: newId('resp'),
        object: 'response.compaction',
        created_at: Math.floor(this.#deps.clock() / 1000),
        output: [
          ...kept.map((k) => ({ ...k.item, id: k.id, type: 'message' as const })),
          { id: compactionId, type: 'compaction', encrypted_content: sealSummary(summary) },
        ],
        usage: {
          input_tokens: usage.input,
          input_tokens_details: { cached_tokens: usage.cached },
          output_tokens: usage.output,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: usage.input + usage.output,
        },
      },
    };
  }
}
