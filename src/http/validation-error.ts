import type { ErrorObject } from 'ajv';
import type { Context as OpenApiContext } from 'openapi-backend';
import { AppError } from '../errors/index.js';
import { IDENTIFIER_PATTERN, IDENTIFIER_REASON, invalidText } from './text.js';

/** `/requestBody/messages/0/role` → `messages[0].role`; `/query/user_id` → `user_id`. */
function fieldOf(error: ErrorObject): string {
  const segments = error.instancePath.split('/').filter(Boolean).slice(1);
  const params = error.params as { missingProperty?: string; additionalProperty?: string; tag?: string };
  const extra =
    error.keyword === 'required'
      ? params.missingProperty
      : error.keyword === 'additionalProperties'
        ? params.additionalProperty
        : error.keyword === 'discriminator'
          ? params.tag
          : undefined;
  if (extra !== undefined && extra !== 'requestBody') segments.push(extra);
  let field = '';
  for (const segment of segments) field += /^\d+$/.test(segment) ? `[${segment}]` : field ? `.${segment}` : segment;
  return field || 'body';
}

function reasonOf(error: ErrorObject): string {
  if (error.keyword === 'additionalProperties') return 'unknown field';
  if (error.keyword === 'required') return 'is required';
  if (error.keyword === 'discriminator') {
    const { tag } = error.params as { tag?: string };
    const branches = (
      (error.parentSchema as { oneOf?: Array<{ properties?: Record<string, { enum?: unknown[] }> }> })?.oneOf ?? []
    )
      .flatMap((branch) => branch.properties?.[tag ?? '']?.enum ?? [])
      .map(String);
    return branches.length > 0 ? `must be one of ${branches.join(', ')}` : 'has no matching variant';
  }
  if (error.keyword === 'enum') {
    const allowed = (error.params as { allowedValues?: unknown[] }).allowedValues ?? [];
    return `must be one of ${allowed.map(String).join(', ')}`;
  }
  return error.message ?? 'is invalid';
}

/**
 * Picks the most useful of ajv's errors: an unknown field or a wrong model beats a nested union mismatch, and
 * within a union a branch of the value's own type beats "must be <another type>" at the same place or above it
 * (an empty list where a string or a non-empty list is allowed: "must NOT have fewer than 1 items", not "must be
 * string"; a list with one text too long: that text's "must NOT have more than … characters").
 */
function primary(errors: readonly ErrorObject[]): ErrorObject | undefined {
  const specific = errors.filter((e) => e.keyword !== 'oneOf' && e.keyword !== 'anyOf' && e.keyword !== 'if');
  const within = (o: ErrorObject, e: ErrorObject) =>
    o.instancePath === e.instancePath || o.instancePath.startsWith(`${e.instancePath}/`);
  // A type error gives way to any error inside the value (a list's item of the wrong type: `input[0].id must
  // be string`, not `input must be string`) and to another kind of error at its own place.
  const ofItsType = (e: ErrorObject) =>
    e.keyword !== 'type' ||
    !specific.some((o) => o !== e && within(o, e) && (o.instancePath !== e.instancePath || o.keyword !== 'type'));
  return (
    errors.find((e) => e.keyword === 'additionalProperties') ?? specific.find(ofItsType) ?? specific[0] ?? errors[0]
  );
}

/** ajv's errors as the product's 400: `INVALID_MODEL` for the model field, `INVALID_PARAMETER` otherwise. */
export function validationError(errors: readonly ErrorObject[]): AppError {
  const error = primary(errors);
  if (!error) return new AppError('INVALID_PARAMETER', 'The request is invalid', { field: 'body', reason: 'invalid' });
  if (error.keyword === 'parse') {
    return new AppError('INVALID_JSON', 'The body is not valid JSON', { field: 'body', reason: error.message ?? '' });
  }
  const field = fieldOf(error);
  if (error.keyword === 'pattern' && (error.params as { pattern?: string }).pattern === IDENTIFIER_PATTERN) {
    return invalidText({ field, reason: IDENTIFIER_REASON });
  }
  const reason = reasonOf(error);
  if (field === 'body' && error.keyword === 'required') {
    return new AppError('INVALID_PARAMETER', 'A JSON request body is required', { field, reason });
  }
  const code =
    field === 'model' && error.instancePath.startsWith('/requestBody') ? 'INVALID_MODEL' : 'INVALID_PARAMETER';
  return new AppError(code, `${field} ${reason}`, { field, reason });
}

/** openapi-backend's hook when the request does not match the document: the 400 naming the field. */
export function validationFail(c: OpenApiContext): never {
  throw validationError(c.validation.errors ?? []);
}
