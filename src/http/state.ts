import type Koa from 'koa';
import type { Logger } from 'pino';
import type { Principal } from '../accounts/index.js';
import type { RateLimitDecision } from '../limits/index.js';

/** What the usage row of a request records beyond status and latency. */
export interface UsageNote {
  model: string | null;
  promptTokens: number;
  completionTokens: number;
  credits: number;
  cached: boolean;
  /** The client left before a streamed answer was complete (its status line said 200). */
  clientClosed: boolean;
}

export interface RequestState {
  requestId: string;
  startedAt: number;
  log: Logger;
  operationId?: string;
  principal?: Principal;
  rateLimit?: RateLimitDecision;
  usage: UsageNote;
  /** Set by streamed responses: settles when the stream has ended, with the final token counts noted. */
  streamDone?: Promise<void>;
}

export type AppContext = Koa.ParameterizedContext<RequestState>;
