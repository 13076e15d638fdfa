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

/** undefined means "no JSON representation" (the property is then omitted). */
function writeValue(value: unknown): string | undefined {
  const resolved = resolveToJson(value);
  if (resolved === undefined || typeof resolved === 'function' || typeof resolved === 'symbol') {
    return undefined;
  }
  if (resolved === null || typeof resolved !== 'object') {
    return JSON.stringify(resolved);
  }
  if (Array.isArray(resolved)) {
    return `[${resolved.map((item: unknown) => writeValue(item) ?? 'null').join(',')}]`;
  }
  const record = resolved as Record<string, unknown>;
  const members: string[] = [];
  for (const key of Object.keys(record).sort()) {
    const written = writeValue(record[key]);
    if (written !== undefined) members.push(`${JSON.stringify(key)}:${written}`);
  }
  return `{${members.join(',')}}`;
}

function resolveToJson(value: unknown): unknown {
  if (typeof value === 'object' && value !== null && 'toJSON' in value && typeof value.toJSON === 'function') {
    return (value.toJSON as () => unknown).call(value);
  }
  return value;
}
