import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { RequestRecord } from '../http/index.js';
import { type EngineSources, engineMetrics } from './engine-metrics.js';

type HistogramChild = ReturnType<Histogram<string>['labels']>;

/**
 * One request shape (endpoint, model, status): its histogram children, and its counters' increments since
 * the last scrape. prom-client hashes a child's label object on every `inc`, so five counter updates a chat
 * request were five hashes (~1.5 % of a miss's CPU in bench:chat); here a request adds to plain numbers and
 * each counter's `collect()` hands the sums to prom-client when /metrics is read.
 */
interface Shape {
  endpoint: string;
  model: string;
  status: string;
  duration: HistogramChild;
  ttft?: HistogramChild;
  requests: number;
  prompt: number;
  completion: number;
  credits: number;
}

/** One finished authenticated request, as the metrics count it: the fields of its RequestRecord they read. */
export type RequestSample = Pick<
  RequestRecord,
  | 'endpoint'
  | 'model'
  | 'status'
  | 'latencyMs'
  | 'ttftMs'
  | 'failedStatus'
  | 'promptTokens'
  | 'completionTokens'
  | 'credits'
  | 'cached'
>;

/** Which connection cap refused a connection or closed an idle one: its address's or the server's. */
export type ConnectionScope = 'per_address' | 'total';
const CONNECTION_SCOPES: readonly ConnectionScope[] = ['per_address', 'total'];

export interface MetricSources extends EngineSources {
  /** Documents whose ingestion job is not finished (status `processing`). */
  ingestion?: () => Promise<{ processing: number }>;
  /** Each write-behind buffer (`usage`, `sla`): rows pending now, and retries and rows spilled since the start. */
  writeBehind?: () => Record<string, { pending: number; retries: number; spilled: number }>;
  /** Idempotency-Key requests by how they ended at their claim, counted since the start. */
  idempotency?: () => Readonly<Record<string, number>>;
}

export interface MetricsOptions {
  /** Whether a name is an operationId of the contract: any other endpoint label becomes `other` (a 404 path is not a label value). */
  isEndpoint(name: string): boolean;
  /** Every model id: any other becomes `other`; a request without a model is `none`. */
  models: readonly string[];
  /** Histogram bounds in milliseconds (the SLA's, so both views bucket alike). */
  latencyBoundsMs: readonly number[];
  sources?: MetricSources;
}

/**
 * The process's Prometheus metrics (prom-client), in their own registry so that several runtimes in one
 * process (the tests) do not share counters. Labels are bounded by construction: endpoint ∈ the
 * contract's operationIds, model ∈ the model ids, status ∈ HTTP statuses, and a few fixed words; never an
 * account, a key, a user or a path. Counters are per process: Prometheus sums replicas by `instance`.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly #isEndpoint: (name: string) => boolean;
  readonly #models: ReadonlySet<string>;
  readonly #shapes = new Map<string, Shape>();
  /** Cache hits and misses since the last scrape. */
  readonly #cacheResults = { hit: 0, miss: 0 };
  readonly #duration: Histogram<'endpoint' | 'model'>;
  readonly #ttft: Histogram<'model'>;
  readonly #streamFailures: Counter<'model' | 'status'>;
  readonly #rateLimited: Counter;
  readonly #sandboxExecutions: Counter<'outcome'>;
  readonly #connectionsRefused: Counter<'reason'>;
  readonly #idleConnectionsClosed: Counter<'reason'>;
  /** Client connections open now: 0 until the server's connection caps give their count (readOpenConnections). */
  #openConnections: () => number = () => 0;

  constructor(options: MetricsOptions) {
    this.#isEndpoint = options.isEndpoint;
    this.#models = new Set(options.models);
    const registers = [this.registry];
    const buckets = options.latencyBoundsMs.map((ms) => ms / 1000);
    const shapes = this.#shapes;
    /** Each shape's pending `field` added to `counter` under the shape's labels for it, then zeroed. */
    const handOver = (
      counter: Counter<string>,
      field: 'requests' | 'prompt' | 'completion' | 'credits',
      labels: (shape: Shape) => Record<string, string>,
    ) => {
      for (const shape of shapes.values()) {
        const amount = shape[field];
        if (amount === 0) continue;
        shape[field] = 0;
        counter.inc(labels(shape), amount);
      }
    };
    new Counter({
      name: 'pvai_requests_total',
      help: 'Authenticated requests answered, by operation, model and HTTP status.',
      labelNames: ['endpoint', 'model', 'status'],
      registers,
      collect() {
        handOver(this, 'requests', ({ endpoint, model, status }) => ({ endpoint, model, status }));
      },
    });
    this.#duration = new Histogram({
      name: 'pvai_request_duration_seconds',
      help: 'Time from the request to the end of its answer (a stream: its last event).',
      labelNames: ['endpoint', 'model'],
      buckets,
      registers,
    });
    this.#ttft = new Histogram({
      name: 'pvai_time_to_first_token_seconds',
      help: 'Time from the request to the first token of a chat answer (without a stream: the whole answer).',
      labelNames: ['model'],
      buckets,
      registers,
    });
    this.#streamFailures = new Counter({
      name: 'pvai_stream_failures_total',
      help: 'Streams that ended with an error event after their 200 status, by model and the error status.',
      labelNames: ['model', 'status'],
      registers,
    });
    new Counter({
      name: 'pvai_tokens_total',
      help: 'Tokens processed by chat completions (cache hits process none), by model and kind.',
      labelNames: ['model', 'kind'],
      registers,
      collect() {
        handOver(this, 'prompt', ({ model }) => ({ model, kind: 'prompt' }));
        handOver(this, 'completion', ({ model }) => ({ model, kind: 'completion' }));
      },
    });
    new Counter({
      name: 'pvai_credits_charged_total',
      help: 'Credits charged for answered requests, by model.',
      labelNames: ['model'],
      registers,
      collect() {
        handOver(this, 'credits', ({ model }) => ({ model }));
      },
    });
    const cacheResults = this.#cacheResults;
    new Counter({
      name: 'pvai_cache_lookups_total',
      help: 'Answered chat completions by response-cache result (hit or miss).',
      labelNames: ['result'],
      registers,
      collect() {
        for (const result of ['hit', 'miss'] as const) {
          if (cacheResults[result] === 0) continue;
          this.inc({ result }, cacheResults[result]);
          cacheResults[result] = 0;
        }
      },
    });
    const idempotency = options.sources?.idempotency;
    const idempotencySeen: Record<string, number> = {};
    new Counter({
      name: 'pvai_idempotency_requests_total',
      help: 'Requests with an Idempotency-Key by outcome: executed, taken_over, replayed, reused (422), in_use and not_stored (409).',
      labelNames: ['outcome'],
      registers,
      collect() {
        for (const [outcome, total] of Object.entries(idempotency?.() ?? {})) {
          this.inc({ outcome }, total - (idempotencySeen[outcome] ?? 0));
          idempotencySeen[outcome] = total;
        }
      },
    });
    this.#rateLimited = new Counter({
      name: 'pvai_rate_limit_rejections_total',
      help: 'Requests refused by the rate limiter (429).',
      registers,
    });
    this.#sandboxExecutions = new Counter({
      name: 'pvai_sandbox_executions_total',
      help: 'Code executions, by outcome: completed, timeout or error (refused or failed to run).',
      labelNames: ['outcome'],
      registers,
    });
    this.#connectionsRefused = new Counter({
      name: 'pvai_connections_refused_total',
      help: 'Connections refused with 503 TOO_MANY_CONNECTIONS, by the cap that refused them: per_address or total.',
      labelNames: ['reason'],
      registers,
    });
    this.#idleConnectionsClosed = new Counter({
      name: 'pvai_idle_connections_closed_total',
      help: 'Idle kept-alive connections closed to make room for a new one, by the cap that was reached.',
      labelNames: ['reason'],
      registers,
    });
    // Both series from the start, at 0, so an alert on their rate has something to read.
    for (const reason of CONNECTION_SCOPES) {
      this.#connectionsRefused.inc({ reason }, 0);
      this.#idleConnectionsClosed.inc({ reason }, 0);
    }
    const sources = options.sources ?? {};
    engineMetrics(registers, sources);
    const openConnections = () => this.#openConnections();
    new Gauge({
      name: 'pvai_connections_open',
      help: 'Client connections open now (refused ones excluded).',
      registers,
      collect() {
        this.set(openConnections());
      },
    });
    const ingestion = sources.ingestion;
    new Gauge({
      name: 'pvai_ingestion_jobs_processing',
      help: 'Documents whose ingestion (extraction, chunking, embedding) is not finished.',
      registers,
      async collect() {
        if (!ingestion) return;
        try {
          this.set((await ingestion()).processing);
        } catch {
          // The scrape goes on with the last value; readiness reports the database.
        }
      },
    });
    this.#writeBehindMetrics(sources.writeBehind);
  }

  /** The gauge of rows pending and the counters of retries and spilled rows, per buffer, read at scrape time. */
  #writeBehindMetrics(read: MetricSources['writeBehind']): void {
    const registers = [this.registry];
    new Gauge({
      name: 'pvai_write_behind_pending',
      help: 'Usage rows (kind=usage), SLA buckets (kind=sla) and refunds (kind=refunds) not yet written: buffered, kept to retry, or spilled to the data directory.',
      labelNames: ['kind'],
      registers,
      collect() {
        for (const [kind, state] of Object.entries(read?.() ?? {})) this.set({ kind }, state.pending);
      },
    });
    /** A counter of a cumulative number the buffer keeps: the growth since the last scrape is added. */
    const cumulative = (name: string, help: string, field: 'retries' | 'spilled') => {
      const seen = new Map<string, number>();
      new Counter({
        name,
        help,
        labelNames: ['kind'],
        registers,
        collect() {
          for (const [kind, state] of Object.entries(read?.() ?? {})) {
            this.inc({ kind }, state[field] - (seen.get(kind) ?? 0));
            seen.set(kind, state[field]);
          }
        },
      });
    };
    cumulative(
      'pvai_write_behind_retries_total',
      'Writes of a usage or SLA batch that had failed before (the database was away), by kind.',
      'retries',
    );
    cumulative(
      'pvai_write_behind_spilled_rows_total',
      'Usage rows or SLA buckets appended to the spill file under the data directory (past the memory bound, or at a stop while the database was away), by kind.',
      'spilled',
    );
  }

  #endpoint(endpoint: string): string {
    return this.#isEndpoint(endpoint) ? endpoint : 'other';
  }

  #model(model: string | null): string {
    if (model === null) return 'none';
    return this.#models.has(model) ? model : 'other';
  }

  /**
   * One request shape (endpoint, model, status), kept: one string and one map lookup per request. A series
   * appears in /metrics once it had a sample (histogram children are made on first use, counters are handed
   * their sums at the scrape). Label values are bounded (known endpoints and models, statuses).
   */
  #shape(endpoint: string, model: string, status: number): Shape {
    const key = `${endpoint}\u0000${model}\u0000${status}`;
    let shape = this.#shapes.get(key);
    if (!shape) {
      shape = {
        endpoint,
        model,
        status: String(status),
        duration: this.#duration.labels(endpoint, model),
        requests: 0,
        prompt: 0,
        completion: 0,
        credits: 0,
      };
      this.#shapes.set(key, shape);
    }
    return shape;
  }

  /** Counts one finished authenticated request. */
  observeRequest(r: RequestSample): void {
    const endpoint = this.#endpoint(r.endpoint);
    const shape = this.#shape(endpoint, this.#model(r.model), r.status);
    const { model } = shape;
    shape.requests += 1;
    shape.duration.observe(r.latencyMs / 1000);
    if (r.ttftMs !== undefined) {
      shape.ttft ??= this.#ttft.labels(model);
      shape.ttft.observe(r.ttftMs / 1000);
    }
    if (r.failedStatus !== undefined) this.#streamFailures.inc({ model, status: String(r.failedStatus) });
    if (r.promptTokens > 0) shape.prompt += r.promptTokens;
    if (r.completionTokens > 0) shape.completion += r.completionTokens;
    if (r.credits > 0) shape.credits += r.credits;
    if (r.endpoint === 'createChatCompletion' && r.status === 200) this.#cacheResults[r.cached ? 'hit' : 'miss'] += 1;
  }

  /** Counts one request refused by the rate limiter. */
  rateLimited(): void {
    this.#rateLimited.inc();
  }

  /** Counts one connection refused by a connection cap. */
  connectionRefused(reason: ConnectionScope): void {
    this.#connectionsRefused.inc({ reason });
  }

  /** Given once, when the server starts: reads how many client connections are open (read at scrape time). */
  readOpenConnections(read: () => number): void {
    this.#openConnections = read;
  }

  /** Counts one idle connection closed to make room under a connection cap. */
  idleConnectionClosed(reason: ConnectionScope): void {
    this.#idleConnectionsClosed.inc({ reason });
  }

  /** Counts one code execution by outcome. */
  sandboxExecution(outcome: 'completed' | 'timeout' | 'error'): void {
    this.#sandboxExecutions.inc({ outcome });
  }

  /** The text exposition format, and its media type. */
  async exposition(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }
}
