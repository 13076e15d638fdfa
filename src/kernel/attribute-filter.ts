/**
 * OpenAI's attribute filters (the Responses API's `file_search.filters`), on a document's metadata: a
 * comparison of one key with a value, or `and`/`or` of filters. Read once at the door (`readAttributeFilter`,
 * which names the field at fault) and then applied to each candidate (`matchesFilter`).
 */
export type AttributeFilter =
  | { type: 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte'; key: string; value: string | number | boolean }
  | { type: 'in' | 'nin'; key: string; value: Array<string | number> }
  | { type: 'and' | 'or'; filters: AttributeFilter[] };

const COMPARISONS = new Set(['eq', 'ne', 'gt', 'gte', 'lt', 'lte']);
const MAX_DEPTH = 8;

/** Why `value` is not a filter (with the path of the part at fault), or the filter. */
export function readAttributeFilter(
  value: unknown,
  field: string,
  depth = 0,
): { filter: AttributeFilter } | { field: string; reason: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { field, reason: 'must be a comparison or a compound filter' };
  }
  const f = value as Record<string, unknown>;
  if (f.type === 'and' || f.type === 'or') {
    if (depth >= MAX_DEPTH) return { field, reason: `nests more than ${MAX_DEPTH} compound filters` };
    if (!Array.isArray(f.filters) || f.filters.length === 0)
      return { field: `${field}.filters`, reason: 'must list filters' };
    const filters: AttributeFilter[] = [];
    for (const [i, inner] of f.filters.entries()) {
      const read = readAttributeFilter(inner, `${field}.filters[${i}]`, depth + 1);
      if ('reason' in read) return read;
      filters.push(read.filter);
    }
    return { filter: { type: f.type, filters } };
  }
  if (typeof f.key !== 'string' || f.key === '') return { field: `${field}.key`, reason: 'is required' };
  if (f.type === 'in' || f.type === 'nin') {
    const list = f.value;
    if (!Array.isArray(list) || !list.every((v) => typeof v === 'string' || typeof v === 'number')) {
      return { field: `${field}.value`, reason: 'must be a list of strings or numbers' };
    }
    return { filter: { type: f.type, key: f.key, value: list as Array<string | number> } };
  }
  if (typeof f.type !== 'string' || !COMPARISONS.has(f.type)) {
    return { field: `${field}.type`, reason: 'must be eq, ne, gt, gte, lt, lte, in, nin, and or or' };
  }
  const v = f.value;
  if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') {
    return { field: `${field}.value`, reason: 'must be a string, a number or a boolean' };
  }
  return { filter: { type: f.type as 'eq', key: f.key, value: v } };
}

function compare(a: unknown, b: string | number | boolean): number | undefined {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  return undefined;
}

/** Whether a document's metadata passes the filter (a missing key passes only `ne` and `nin`). */
export function matchesFilter(metadata: Readonly<Record<string, unknown>>, filter: AttributeFilter): boolean {
  if ('filters' in filter) {
    const test = (f: AttributeFilter) => matchesFilter(metadata, f);
    return filter.type === 'and' ? filter.filters.every(test) : filter.filters.some(test);
  }
  const actual = metadata[filter.key];
  if (Array.isArray(filter.value)) {
    const listed = filter.value.some((v) => v === actual);
    return filter.type === 'in' ? listed : !listed;
  }
  if (filter.type === 'eq') return actual === filter.value;
  if (filter.type === 'ne') return actual !== filter.value;
  const order = compare(actual, filter.value);
  if (order === undefined) return false;
  if (filter.type === 'gt') return order > 0;
  if (filter.type === 'gte') return order >= 0;
  if (filter.type === 'lt') return order < 0;
  return order <= 0;
}
