/**
 * The Qdrant nodes pvai may talk to (`QDRANT_URL`, one URL or a cluster's nodes comma-separated) and the
 * failover between them. Any node of a Qdrant cluster serves every collection (it forwards to the nodes that
 * hold the shards), so pvai keeps to one node, the first that answers, and moves to the next only when the one
 * in use cannot be reached: an operation that got no HTTP answer at all (refused, reset, timed out) is run
 * again on the next node, each node once. That retry is safe because every operation pvai sends is
 * idempotent (upserts and vector updates of points with derived ids, deletes by filter, reads). An HTTP
 * error is Qdrant's answer and is not retried elsewhere: another node would give the same one.
 */
import { QdrantClient } from '@qdrant/js-client-rest';
import { TRACING } from '../../tracing/index.js';
import { carryingTrace, describeQdrantError } from './qdrant-support.js';

/** QDRANT_URL's nodes, in order (spaces around the commas allowed). */
export function qdrantUrls(value: string): string[] {
  return value
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u.length > 0);
}

/** Whether Qdrant did not answer at all (no HTTP status): a node down or unreachable, which another may not be. */
function unreachable(err: unknown): boolean {
  return typeof (err as { status?: unknown } | null)?.status !== 'number';
}

export class QdrantNodes {
  readonly urls: readonly string[];
  readonly #clients: QdrantClient[];
  /** The node in use: kept until it fails to answer. */
  #current = 0;

  constructor(urls: readonly string[], options: { apiKey?: string | undefined; timeoutMs?: number | undefined }) {
    if (urls.length === 0) throw new Error('QDRANT_URL names no Qdrant node');
    this.urls = urls;
    this.#clients = urls.map((u) => client(u, options));
  }

  /** The URL of the node in use. */
  get url(): string {
    return this.urls[this.#current] as string;
  }

  /**
   * Runs one operation on the node in use; when that node does not answer, on the next ones in turn. Failures
   * say what failed, where (the last node tried), and Qdrant's own reason.
   */
  async run<T>(operation: string, collection: string, fn: (client: QdrantClient) => Promise<T>): Promise<T> {
    let tried = 0;
    for (;;) {
      const at = this.#current;
      try {
        return await fn(this.#clients[at] as QdrantClient);
      } catch (err) {
        tried++;
        if (!unreachable(err) || tried >= this.#clients.length) {
          const where =
            tried > 1 ? `${this.urls[at]} (and ${tried - 1} other node${tried > 2 ? 's' : ''})` : this.urls[at];
          throw describeQdrantError(err, { url: where as string, collection, operation });
        }
        // Another call may have moved on already: only the first to see this node fail moves the rest.
        if (this.#current === at) this.#current = (at + 1) % this.#clients.length;
      }
    }
  }
}

function client(value: string, options: { apiKey?: string | undefined; timeoutMs?: number | undefined }) {
  // The client takes a URL without a port as port 6333 and drops its path; here a URL means what it
  // says (as for pvai doctor): no port is the scheme's, a path is a prefix (Qdrant behind a proxy).
  const url = new URL(value);
  const prefix = url.pathname.replace(/\/+$/, '');
  const made = new QdrantClient({
    url: url.origin,
    port: Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
    ...(prefix ? { prefix } : {}),
    ...(options.apiKey ? { apiKey: options.apiKey } : {}),
    // Plain HTTP (a Qdrant beside the service): a connection per request. Qdrant's HTTP server leaves
    // Nagle's algorithm on and sends a response over ~1 KB in two segments; on a kept-alive
    // connection the second waits for the client's delayed ACK, 40 ms. Measured at 1k points: a
    // query answering 100 ids took 46.8 ms p50 kept alive, 3.4 ms on a fresh connection (whose first
    // segments Linux ACKs at once). Over HTTPS a handshake costs more than it saves: kept alive.
    ...(url.protocol === 'http:' ? { headers: { connection: 'close' } } : {}),
    timeout: options.timeoutMs ?? 30_000,
    checkCompatibility: false,
  });
  // While tracing, each call carries its caller's traceparent (otherwise not wrapped).
  return TRACING.on ? carryingTrace(made) : made;
}
