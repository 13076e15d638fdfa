import { Readable } from 'node:stream';

/**
 * A JSON body that is written while it is read: the document's value, where any list may be given as an
 * AsyncIterable of its items instead of an array. Objects are walked property by property; a list given as
 * an iterable is pulled one item at a time, each item written whole. So a body of unbounded lists (an end
 * user's export) is never built in memory: at most one item and one output piece of it are.
 */
export type Streamed<T> = T extends readonly (infer E)[]
  ? T | AsyncIterable<E>
  : T extends object
    ? { [K in keyof T]: Streamed<T[K]> }
    : T;

/** Output pieces of about this many characters: one write per piece, not one per item. */
const PIECE_CHARS = 16 * 1024;

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** JSON.stringify's text for one value; what it leaves out (undefined, a function) is written as null. */
function text(value: unknown): string {
  return JSON.stringify(value) ?? 'null';
}

/** The JSON text of `value`, in the order JSON.stringify would write it, as it is produced. */
async function* jsonText(value: unknown): AsyncGenerator<string> {
  if (isAsyncIterable(value)) {
    yield '[';
    let first = true;
    for await (const item of value) {
      yield first ? text(item) : `,${text(item)}`;
      first = false;
    }
    yield ']';
    return;
  }
  if (!isPlainObject(value)) {
    yield text(value);
    return;
  }
  yield '{';
  let first = true;
  for (const [key, member] of Object.entries(value)) {
    // As JSON.stringify: a property whose value has no JSON form is left out.
    if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
    yield `${first ? '' : ','}${JSON.stringify(key)}:`;
    first = false;
    yield* jsonText(member);
  }
  yield '}';
}

/** The text joined into pieces of at least PIECE_CHARS (the last one shorter). */
async function* pieces(parts: AsyncIterable<string>): AsyncGenerator<string> {
  let piece = '';
  for await (const part of parts) {
    piece += part;
    if (piece.length >= PIECE_CHARS) {
      yield piece;
      piece = '';
    }
  }
  if (piece) yield piece;
}

/**
 * `value` as a readable JSON body. Why a stream of its own rather than `ctx.body = value`: Koa serialises a
 * body with JSON.stringify, whole, in memory; and the contract's only streams so far are text/event-stream,
 * whose framing is not JSON. This is the same bytes JSON.stringify would give, pulled on demand: Readable.from
 * asks the generator for the next piece only when the socket has taken the last one (backpressure), and a
 * client that leaves ends the generator (its `finally` blocks run) instead of leaving it to run on.
 *
 * The first piece is produced before this resolves, so a failure at the start (the first read of the
 * store) is still an ordinary error answer with its status; a later one can only cut the response.
 */
export async function jsonStream(value: unknown): Promise<Readable> {
  const source = pieces(jsonText(value));
  const first = await source.next();
  async function* all(): AsyncGenerator<string> {
    try {
      if (first.done) return;
      yield first.value;
      yield* source;
    } finally {
      // Ended early (the client left while the first piece waited): the source's own `finally` runs too.
      await source.return(undefined);
    }
  }
  return Readable.from(all(), { objectMode: false });
}
