import { AppError } from '../errors/index.js';
import type { ApiKeyRecord } from '../kernel/index.js';

/**
 * 403 MODEL_NOT_ALLOWED_FOR_KEY for a model outside the key's own allow-list (none: every model of its tier).
 * `model` is the resolved id (after any alias), so an alias of an allowed model passes.
 */
export function checkKeyModel(key: Pick<ApiKeyRecord, 'id' | 'name' | 'models'>, model: string): void {
  const allowed = key.models;
  if (!allowed || allowed.includes(model)) return;
  const label = key.name === null ? `Key ${key.id}` : `Key "${key.name}" (${key.id})`;
  throw new AppError('MODEL_NOT_ALLOWED_FOR_KEY', `${label} may call ${allowed.join(', ')} only, not ${model}`, {
    model,
    key_id: key.id,
    allowed,
  });
}
