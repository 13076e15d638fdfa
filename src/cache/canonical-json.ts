/**
 * Canonical JSON: one exact text for every JSON value, however its objects
 * were built, so it can be hashed into a cache key.
 *
 * Rules (JSON.stringify's, except for key order):
 * - Object keys are sorted by UTF-16 code units (the default Array#sort
 *   order), at every depth. We write the braces ourselves instead of
 *   rebuilding objects for JSON.stringify, because JS always enumerates
 *   integer-like keys ("9", "10") first in numeric order, which would break
 *   the sort.
 * - Object properties whose value is undefined, a function or a symbol are
 *   omitted; in arrays such elements become null.
 * - A value with a toJSON method is replaced by its result first (Dates
 *   become ISO strings).
 * - Strings, numbers, booleans and null are written by JSON.stringify
 *   (NaN and ±Infinity become null). No whitespace anywhere.
 * - BigInt throws, as in JSON.stringify, and so does a cycle (a TypeError).
 * - Any depth: the writer keeps its own stack, so deep nesting never overflows the call stack.
 */
export function canonicalJson(value: unknown): string {
  return writeValue(value) ?? 'null';
}

/**
 * The canonical JSON of `value`, or undefined when it has no JSON representation (undefined, a
 * function, a symbol): what an object property with that value becomes, omitted.
 */
export function canonicalJsonOrUndefined(value: unknown): string | undefined {
  return writeValue(value);
}

/** What writeValue needs of a container being written: the array, or the object and its sorted keys. */
interface Frame {
  array: readonly unknown[] | undefined;
  record: Record<string, unknown>;
  keys: readonly string[];
  /** The next element or key to write. */
  next: number;
  /** Whether anything was written into an object yet (undefined-valued properties are skipped). */
  empty: boolean;
}

const NO_RECORD: Record<string, unknown> = Object.freeze({});
const NO_KEYS: readonly string[] = Object.freeze([]);

/** A sentinel of scalarJson: the value is an array or an object, written by the loop of writeValue. */
const CONTAINER = Symbol('container');

/**
 * undefined means "no JSON representation" (the property is then omitted).
 *
 * Written with an explicit stack rather than by recursion: a value nested thousands of levels deep
 * (the HTTP layer refuses bodies nested past its limit, but this must not depend on it) costs memory
 * in proportion, never the call stack. One string is built by concatenation (V8 ropes) rather than
 * arrays joined per level: this runs on every cached chat request.
 */
function writeValue(value: unknown): string | undefined {
  const root = resolveToJson(value);
  const scalar = scalarJson(root);
  if (scalar !== CONTAINER) return scalar;
  const stack: Frame[] = [];
  // The containers being written, to refuse a cycle as JSON.stringify does instead of looping for ever.
  const open = new Set<object>();
  let out = enter(root as object, stack, open);
  while (stack.length > 0) {
    const frame = stack[stack.length - 1] as Frame;
    const { array } = frame;
    if (array !== undefined) {
      if (frame.next === array.length) {
        out += ']';
        open.delete(array);
        stack.pop();
        continue;
      }
      const i = frame.next++;
      if (i > 0) out += ',';
      const child = resolveToJson(array[i]);
      const written = scalarJson(child);
      out += written === CONTAINER ? enter(child as object, stack, open) : (written ?? 'null');
      continue;
    }
    if (frame.next === frame.keys.length) {
      out += '}';
      open.delete(frame.record);
      stack.pop();
      continue;
    }
    const key = frame.keys[frame.next++] as string;
    const child = resolveToJson(frame.record[key]);
    const written = scalarJson(child);
    if (written === undefined) continue;
    out += `${frame.empty ? '' : ','}${JSON.stringify(key)}:`;
    frame.empty = false;
    out += written === CONTAINER ? enter(child as object, stack, open) : written;
  }
  return out;
}

/** Pushes an array or object to be written and returns its opening bracket. */
function enter(container: object, stack: Frame[], open: Set<object>): string {
  if (open.has(container)) throw new TypeError('Converting circular structure to canonical JSON');
  open.add(container);
  if (Array.isArray(container)) {
    stack.push({ array: container, record: NO_RECORD, keys: NO_KEYS, next: 0, empty: true });
    return '[';
  }
  const record = container as Record<string, unknown>;
  stack.push({ array: undefined, record, keys: Object.keys(record).sort(), next: 0, empty: true });
  return '{';
}

/** The JSON of a scalar; undefined for no representation; CONTAINER for an array or an object. */
function scalarJson(resolved: unknown): string | undefined | typeof CONTAINER {
  switch (typeof resolved) {
    case 'string':
    case 'number':
    case 'boolean':
      return JSON.stringify(resolved);
    case 'object':
      return resolved === null ? 'null' : CONTAINER;
    case 'bigint':
      return JSON.stringify(resolved); // throws, as JSON.stringify does
    default:
      return undefined; // undefined, functions, symbols
  }
}

function resolveToJson(value: unknown): unknown {
  if (typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return (value as { toJSON: () => unknown }).toJSON();
  }
  return value;
}
