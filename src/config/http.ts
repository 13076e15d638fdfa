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
 */
export const HTTP_DEFAULTS = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  bodyIdleTimeoutMs: 5_000,
  keepAliveTimeoutMs: 65_000,
  maxJsonDepth: 64,
} as const;

const ms = (min: number, max: number) => z.number().int().min(min).max(max);

export const httpSchema = z
  .object({
    headersTimeoutMs: ms(100, 600_000).default(HTTP_DEFAULTS.headersTimeoutMs),
    requestTimeoutMs: ms(100, 3_600_000).default(HTTP_DEFAULTS.requestTimeoutMs),
    bodyIdleTimeoutMs: ms(100, 600_000).default(HTTP_DEFAULTS.bodyIdleTimeoutMs),
    keepAliveTimeoutMs: ms(100, 3_600_000).default(HTTP_DEFAULTS.keepAliveTimeoutMs),
    maxJsonDepth: z.number().int().min(8).max(1000).default(HTTP_DEFAULTS.maxJsonDepth),
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
