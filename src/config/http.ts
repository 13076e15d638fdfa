import { z } from 'zod';

/**
 * How long a client may take, and how deep its JSON may nest. The defaults, and why:
 *
 * - `headersTimeoutMs` 10 s: the request line and headers. A client sends them in one write, in
 *   milliseconds; 10 s leaves room for a lost packet or two on a bad mobile link. (Node's default: 60 s.)
 * - `requestTimeoutMs` 30 s: the whole request, headers and body. A body at the default 1 MiB limit
 *   then needs ~35 KB/s, slower than any link a client of this API is on; Node's default (300 s) let a
 *   client that trickles its body hold a connection for five minutes.
 * - `bodyIdleTimeoutMs` 5 s: the longest pause inside a body. A client writes a JSON body it already
 *   has and never pauses; 5 s is several TCP retransmission timeouts (the first is 1 s).
 * - `keepAliveTimeoutMs` 65 s: an idle connection between two requests. Longer than the 60 s idle
 *   timeout of the proxies usually in front (nginx's upstream keepalive_timeout, cloud load balancers),
 *   so the server never closes a connection a proxy is about to reuse, which the proxy would report as a
 *   502. An idle connection costs a socket and no work; a stalled request is what the other three stop.
 * - `maxJsonDepth` 64: nesting of arrays and objects in a body. A chat request's deepest free-form field
 *   (a tool's parameters, a response_format json_schema) starts 5 levels down and each level of a JSON
 *   Schema takes two (`properties`, the name), so 64 holds a schema nested ~30 levels: far more than any
 *   tool declares (OpenAI's strict mode allows 10), far less than the thousands at which code that walks
 *   a value recursively runs out of stack.
 * - `maxConnections` `auto`: open connections in total, as many as the process's file-descriptor limit
 *   allows: half of what is left of the soft limit ("Max open files", read at start) once
 *   `connectionFdReserve` is set aside, the other half for what those connections' requests open in turn
 *   (an upstream or Qdrant socket each). A number lowers it, never past that ceiling. With 4,096 files
 *   that is 1,920 connections; past the limit the kernel refused every client alike, with a reset.
 * - `maxConnectionsPerAddress` 256: open connections from one client address. A client's rate limit
 *   keeps at most a few busy at once (the top tier's 300 a minute is 5 a second: 256 holds answers of
 *   50 s each at that rate), so 256 is a client with a large pool; 4,200 from one address is a flood.
 *   Behind a reverse proxy every client shares the proxy's address: set 0 (no per-address cap).
 * - `connectionFdReserve` 256: descriptors never given to client connections: the database (SQLite's
 *   three files, or PostgreSQL's pool of 20), model files, the sandbox's processes and their pipes
 *   (6 processes of 3 pipes by default), stdio, the event loop's own, with room to spare.
 * - `streamWriteTimeoutMs` 60 s: how long a streamed answer may wait with its socket's buffers full (its
 *   client takes nothing, or too little ever to empty them) before the connection is cut and the upstream
 *   request aborted. A reading client empties them within seconds; a minute is nginx's `send_timeout` for
 *   the same case, well past the stalls of a mobile link.
 */
const HTTP_DEFAULTS = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  bodyIdleTimeoutMs: 5_000,
  keepAliveTimeoutMs: 65_000,
  maxJsonDepth: 64,
  maxConnections: 'auto',
  maxConnectionsPerAddress: 256,
  connectionFdReserve: 256,
  streamWriteTimeoutMs: 60_000,
} as const;

const ms = (min: number, max: number) => z.number().int().min(min).max(max);

export const httpSchema = z
  .object({
    headersTimeoutMs: ms(100, 600_000).default(HTTP_DEFAULTS.headersTimeoutMs),
    requestTimeoutMs: ms(100, 3_600_000).default(HTTP_DEFAULTS.requestTimeoutMs),
    bodyIdleTimeoutMs: ms(100, 600_000).default(HTTP_DEFAULTS.bodyIdleTimeoutMs),
    keepAliveTimeoutMs: ms(100, 3_600_000).default(HTTP_DEFAULTS.keepAliveTimeoutMs),
    maxJsonDepth: z.number().int().min(8).max(1000).default(HTTP_DEFAULTS.maxJsonDepth),
    maxConnections: z
      .union([z.literal('auto'), z.number().int().min(1).max(10_000_000)])
      .default(HTTP_DEFAULTS.maxConnections),
    /** 0: no per-address cap (behind a reverse proxy, where every client has the proxy's address). */
    maxConnectionsPerAddress: z.number().int().min(0).max(10_000_000).default(HTTP_DEFAULTS.maxConnectionsPerAddress),
    connectionFdReserve: z.number().int().min(0).max(1_000_000).default(HTTP_DEFAULTS.connectionFdReserve),
    streamWriteTimeoutMs: ms(100, 3_600_000).default(HTTP_DEFAULTS.streamWriteTimeoutMs),
  })
  .strict()
  // Node refuses a headers deadline past the request's; a body pause longer than the request is moot.
  .refine((h) => h.headersTimeoutMs <= h.requestTimeoutMs, {
    message: 'headersTimeoutMs must not be longer than requestTimeoutMs',
    path: ['headersTimeoutMs'],
  })
  .refine((h) => h.bodyIdleTimeoutMs <= h.requestTimeoutMs, {
    message: 'bodyIdleTimeoutMs must not be longer than requestTimeoutMs',
    path: ['bodyIdleTimeoutMs'],
  })
  .default(HTTP_DEFAULTS);

/** `*`, or an origin as browsers send it: scheme, host and port, lower case, no path. */
const origin = z.string().refine(
  (value) => {
    if (value === '*') return true;
    try {
      const url = new URL(value);
      return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value;
    } catch {
      return false;
    }
  },
  { message: 'must be * or an origin such as https://app.example.com (scheme, host and port; no path)' },
);

/** Browser apps on these origins may call the API (CORS). None by default. */
export const corsSchema = z
  .object({ origins: z.array(origin).max(100).default([]) })
  .strict()
  .default({ origins: [] });
