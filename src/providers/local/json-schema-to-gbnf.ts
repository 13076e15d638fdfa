import type { GbnfJsonSchema } from 'node-llama-cpp';

/**
 * Converts a client-supplied JSON Schema (tool `parameters`, `response_format.json_schema`) into the
 * subset node-llama-cpp can turn into a grammar.
 *
 * Why this exists: node-llama-cpp silently reads any schema it does not recognise as `null`
 * (e.g. `{}` or `{anyOf: …}`), which would force nonsense output. So unknown shapes become "any JSON",
 * `anyOf` becomes `oneOf`, `$ref`s are inlined, and keywords the grammar cannot express
 * (`pattern`, `minimum`, …) are dropped — the output still matches the schema's structure, those
 * value constraints are left to the caller to check.
 *
 * Note the grammar always emits every listed property (optional ones included) — still schema-valid.
 */

type JsonRecord = Record<string, unknown>;

const MAX_DEPTH = 24;

const ANY_JSON: GbnfJsonSchema = {
  oneOf: [
    { type: ['string', 'number', 'boolean', 'null'] },
    { type: 'object', additionalProperties: true },
    { type: 'array' },
  ],
};

const PRIMITIVE_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null']);

type Primitive = string | number | boolean | null;

function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isPrimitive(value: unknown): value is Primitive {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value);
}

function optionalNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

export function jsonSchemaToGbnf(schema: unknown): GbnfJsonSchema {
  return convert(schema, isRecord(schema) ? schema : {}, 0);
}

function convert(schema: unknown, root: JsonRecord, depth: number, refsInPath: readonly string[] = []): GbnfJsonSchema {
  if (!isRecord(schema) || depth > MAX_DEPTH) return ANY_JSON;

  if (typeof schema.$ref === 'string') {
    // A ref already being expanded on this path is recursive: stop there instead of unrolling it.
    if (refsInPath.includes(schema.$ref)) return ANY_JSON;
    return convert(resolveRef(schema.$ref, root), root, depth + 1, [...refsInPath, schema.$ref]);
  }
  if (isPrimitive(schema.const)) return { const: schema.const };
  if (Array.isArray(schema.enum)) {
    const values = schema.enum.filter(isPrimitive);
    if (values.length > 0) return { enum: values };
  }
  const alternatives = Array.isArray(schema.oneOf)
    ? schema.oneOf
    : Array.isArray(schema.anyOf)
      ? schema.anyOf
      : undefined;
  if (alternatives && alternatives.length > 0) {
    return { oneOf: alternatives.map((alt) => convert(alt, root, depth + 1, refsInPath)) };
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0)
    return convert(mergeAllOf(schema), root, depth + 1, refsInPath);

  const types = declaredTypes(schema);
  if (types.length === 0) return ANY_JSON;
  if (types.length > 1) return { oneOf: types.map((type) => convertTyped(type, schema, root, depth, refsInPath)) };
  return convertTyped(types[0] ?? 'null', schema, root, depth, refsInPath);
}

function declaredTypes(schema: JsonRecord): string[] {
  if (typeof schema.type === 'string') return [schema.type];
  if (Array.isArray(schema.type)) return schema.type.filter((type): type is string => typeof type === 'string');
  if (isRecord(schema.properties)) return ['object'];
  if (schema.items !== undefined) return ['array'];
  return [];
}

function convertTyped(
  type: string,
  schema: JsonRecord,
  root: JsonRecord,
  depth: number,
  refsInPath: readonly string[],
): GbnfJsonSchema {
  if (type === 'object') return convertObject(schema, root, depth, refsInPath);
  if (type === 'array') {
    const minItems = optionalNumber(schema.minItems);
    const maxItems = optionalNumber(schema.maxItems);
    return {
      type: 'array',
      ...(schema.items !== undefined && schema.items !== true
        ? { items: convert(schema.items, root, depth + 1, refsInPath) }
        : {}),
      ...(Array.isArray(schema.prefixItems)
        ? { prefixItems: schema.prefixItems.map((item) => convert(item, root, depth + 1, refsInPath)) }
        : {}),
      ...(minItems !== undefined ? { minItems } : {}),
      ...(maxItems !== undefined ? { maxItems } : {}),
    };
  }
  if (type === 'string') {
    if (schema.format === 'date-time' || schema.format === 'date' || schema.format === 'time') {
      return { type: 'string', format: schema.format };
    }
    const minLength = optionalNumber(schema.minLength);
    const maxLength = optionalNumber(schema.maxLength);
    return {
      type: 'string',
      ...(minLength !== undefined ? { minLength } : {}),
      ...(maxLength !== undefined ? { maxLength } : {}),
    };
  }
  if (PRIMITIVE_TYPES.has(type)) return { type: type as 'number' | 'integer' | 'boolean' | 'null' };
  return ANY_JSON;
}

function convertObject(
  schema: JsonRecord,
  root: JsonRecord,
  depth: number,
  refsInPath: readonly string[],
): GbnfJsonSchema {
  const properties: Record<string, GbnfJsonSchema> = {};
  if (isRecord(schema.properties)) {
    for (const [key, value] of Object.entries(schema.properties))
      properties[key] = convert(value, root, depth + 1, refsInPath);
  }
  const hasProperties = Object.keys(properties).length > 0;
  // JSON Schema allows extra keys unless told otherwise; we only allow them when nothing else is
  // described, so a model is not invited to invent keys next to the documented ones.
  const extra = schema.additionalProperties;
  const additionalProperties: boolean | GbnfJsonSchema = isRecord(extra)
    ? convert(extra, root, depth + 1, refsInPath)
    : extra === true
      ? true
      : extra === false
        ? false
        : !hasProperties;
  return { type: 'object', properties, additionalProperties };
}

function mergeAllOf(schema: JsonRecord): JsonRecord {
  const merged: JsonRecord = { ...schema, allOf: undefined };
  const properties: JsonRecord = isRecord(schema.properties) ? { ...schema.properties } : {};
  for (const part of schema.allOf as unknown[]) {
    if (!isRecord(part)) continue;
    for (const [key, value] of Object.entries(part)) {
      if (key === 'properties' && isRecord(value)) Object.assign(properties, value);
      else if (merged[key] === undefined) merged[key] = value;
    }
  }
  if (Object.keys(properties).length > 0) merged.properties = properties;
  return merged;
}

/** Resolves local refs (`#/$defs/x`, `#/definitions/x`, any `#/a/b` pointer); anything else is "any JSON". */
function resolveRef(ref: string, root: JsonRecord): unknown {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const rawSegment of ref.slice(2).split('/')) {
    const segment = decodeURIComponent(rawSegment).replaceAll('~1', '/').replaceAll('~0', '~');
    node = isRecord(node) ? node[segment] : undefined;
  }
  return node;
}
