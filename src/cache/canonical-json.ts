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
 * - BigInt throws, as in JSON.stringify. Input must not contain cycles.
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

/** undefined means "no JSON representation" (the property is then omitted). */
function writeValue(value: unknown): string | undefined {
  const resolved = resolveToJson(value);
  switch (typeof resolved) {
    case 'string':
    case 'number':
    case 'boolean':
      return JSON.stringify(resolved);
    case 'object':
      break;
    case 'bigint':
      return JSON.stringify(resolved); // throws, as JSON.stringify does
    default:
      return undefined; // undefined, functions, symbols
  }
  if (resolved === null) return 'null';
  // One string built by concatenation (V8 ropes) rather than arrays joined per level: this runs on
  // every cached chat request.
  if (Array.isArray(resolved)) {
    let out = '[';
    for (let i = 0; i < resolved.length; i++) {
      if (i > 0) out += ',';
      out += writeValue(resolved[i]) ?? 'null';
    }
    return `${out}]`;
  }
  const record = resolved as Record<string, unknown>;
  let out = '{';
  let first = true;
  for (const key of Object.keys(record).sort()) {
    const written = writeValue(record[key]);
    if (written === undefined) continue;
    out += `${first ? '' : ','}${JSON.stringify(key)}:${written}`;
    first = false;
  }
  return `${out}}`;
}

function resolveToJson(value: unknown): unknown {
  if (typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return (value as { toJSON: () => unknown }).toJSON();
  }
  return value;
}
