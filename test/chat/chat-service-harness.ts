import { createMemoryCache } from '../../src/cache/index.js';
import {
  type AnswerPart,
  type ChatCompletionRequest,
  ChatService,
  type ContextContribution,
  ContextRegistry,
  type ContextSource,
} from '../../src/chat/index.js';
import { AppError } from '../../src/errors/index.js';
import type { Principal } from '../../src/kernel/index.js';
import type { Completion, RoutedRequest, StreamPart } from '../../src/providers/index.js';

/** What the ChatService suites share: a principal, a request and its answer, and a service over scripted parts. */
export const principal: Principal = {
  account: { id: 'acct_1', email: 'a@example.com', tier: 'startup', credits: 100, createdAt: 0 },
  key: {
    id: 'key_1',
    accountId: 'acct_1',
    prefix: 'pv_sk_abc',
    name: null,
    userId: null,
    createdAt: 0,
    lastUsedAt: 0,
    revokedAt: null,
  },
};

export const baseRequest: ChatCompletionRequest = {
  model: 'PV-STANDARD',
  user_id: 'user-1',
  messages: [{ role: 'user', content: 'What is in the warehouse?' }],
};

export const answer: Completion = {
  text: 'Forty-two boxes.',
  toolCalls: [],
  finishReason: 'stop',
  usage: { promptTokens: 9, completionTokens: 4 },
};

const finishParts: StreamPart[] = [
  { type: 'text-delta', text: 'Forty-two ' },
  { type: 'text-delta', text: 'boxes.' },
  { type: 'finish', finishReason: 'stop', usage: { promptTokens: 9, completionTokens: 4 } },
];

type Script = { generate?: () => Promise<Completion>; stream?: () => AsyncIterable<StreamPart> };

/** A scripted router, a real in-process cache, and a credit account that counts what it was asked. */
export function harness(
  script: Script = {},
  sources: ContextSource[] = [],
  options: { price?: number; balance?: number } = {},
) {
  const calls: RoutedRequest[] = [];
  const credits = { balance: options.balance ?? 100, charges: 0, refunds: 0 };
  let streamReturned = 0;
  const service = new ChatService({
    router: {
      async generate(_model, request) {
        calls.push(request);
        return (script.generate ?? (async () => answer))();
      },
      stream(_model, request) {
        calls.push(request);
        const inner = (
          script.stream ??
          async function* () {
            yield* finishParts;
          }
        )()[Symbol.asyncIterator]();
        return {
          [Symbol.asyncIterator]: () => ({
            next: () => inner.next(),
            async return() {
              streamReturned += 1;
              await inner.return?.();
              return { done: true as const, value: undefined };
            },
          }),
        };
      },
    },
    cache: createMemoryCache({ maxBytes: 1 << 20 }),
    credits: {
      async charge(payer, amount) {
        if (credits.balance < amount) return { ok: false, balance: credits.balance };
        credits.balance -= amount;
        credits.charges += 1;
        return { ok: true, balance: credits.balance, refund: { accountId: payer.accountId, amount } };
      },
      async refund({ amount }) {
        credits.balance += amount;
        credits.refunds += 1;
      },
    },
    context: new ContextRegistry(sources),
    clock: () => 1_800_000_000_000,
    cacheTtlMs: 60_000,
    price: () => options.price ?? 2,
    budget: () => ({ contextTokens: 4096, answerTokens: 512 }),
    unavailableReason: (model) => (model === 'PV-CODEX' ? 'no model file' : undefined),
  });
  return { service, calls, credits, streamReturned: () => streamReturned };
}

export const live = () => new AbortController().signal;

export async function drain(parts: AsyncGenerator<AnswerPart, void, undefined>): Promise<AnswerPart[]> {
  const out: AnswerPart[] = [];
  for await (const part of parts) out.push(part);
  return out;
}

export function source(
  name: string,
  contribution: ContextContribution,
  version?: () => string | undefined,
): ContextSource & {
  contributed: number;
} {
  const s = {
    name,
    contributed: 0,
    applies: (request: ChatCompletionRequest) => request.use_rag === true || name === 'memory',
    version: async () => version?.(),
    async contribute() {
      s.contributed += 1;
      return contribution;
    },
  };
  return s;
}

export const isCode = (code: string) => (err: unknown) => err instanceof AppError && err.code === code;
