import type { IncomingMessage } from 'node:http';

export interface MockUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

export type MockBehaviour =
  /** A normal answer; streamed as one chunk per word. `usage: null` omits usage. */
  | { kind: 'answer'; text?: string; finishReason?: string; usage?: MockUsage | null }
  /** A tool call whose arguments arrive split across chunks exactly as given (joined when not streaming). `id: null` omits the id. */
  | { kind: 'tool-call'; name: string; argumentChunks: string[]; id?: string | null; usage?: MockUsage | null }
  /** Streams `chunks` with `delayMs` before each; not streaming: waits `delayMs` × chunks, then answers. */
  | { kind: 'slow'; chunks: string[]; delayMs: number }
  /** An error status, e.g. 429 with Retry-After, or 500. */
  | { kind: 'status'; status: number; retryAfter?: string; body?: unknown }
  /** Reads the request and never answers. */
  | { kind: 'hang' }
  /** Streams `afterChunks` content chunks (default 2), then destroys the socket without finishing. */
  | { kind: 'disconnect'; afterChunks?: number }
  /**
   * Streams content chunks of `chunkChars` characters (default 16,384) for as long as its client takes
   * them, waiting for 'drain' when its buffer is full; never finishes. Not streaming: never answers.
   */
  | { kind: 'endless'; chunkChars?: number };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: unknown;
  model: string | undefined;
  stream: boolean;
  behaviour: MockBehaviour['kind'];
  receivedAt: number;
  /** The client closed the connection before the answer was complete. */
  clientDisconnected: boolean;
  disconnectedAt?: number;
}

export interface MockUpstream {
  /** Base URL including `/v1` (what an OpenAI client calls `baseURL`). */
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Requests whose client went away before the answer was complete. */
  readonly disconnects: number;
  /** Queues behaviours, one per coming request. */
  script(...behaviours: MockBehaviour[]): void;
  /** Answers every request for `model` this way (undefined clears it). */
  scriptModel(model: string, behaviour: MockBehaviour | undefined): void;
  /** Resolves once `count` disconnects have been seen in total. */
  waitForDisconnects(count?: number, timeoutMs?: number): Promise<void>;
  /** Clears queue, model scripts, records and the disconnect count. */
  reset(): void;
  close(): Promise<void>;
}

export interface MockUpstreamOptions {
  /** Keep `requests` (default true; benchmarks turn it off to keep memory flat). */
  record?: boolean;
  /** Text of the default answer. */
  defaultText?: string;
}

/** What the request handlers share with the server that runs them. */
export interface MockState {
  readonly record: boolean;
  readonly defaultText: string;
  readonly queue: MockBehaviour[];
  readonly byModel: Map<string, MockBehaviour>;
  readonly requests: RecordedRequest[];
  /** Runs `fn` after `ms`, unless the server is closed first. */
  later(ms: number, fn: () => void): void;
  /** Counts a client that went away before its answer was complete. */
  noteDisconnect(rec: RecordedRequest | undefined): void;
}
