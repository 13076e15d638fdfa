import { AppError } from '../errors/index.js';
import type { Principal } from '../kernel/index.js';

/**
 * The end user a request through a key bound to none acts for when it names none, on the operations where the
 * end user is optional (responses, conversations, compaction): one end user of the account like any other, in
 * its memory, documents, export and erase. Not derived from the key, so that rotating a key loses nothing.
 */
const DEFAULT_END_USER = 'default';

/** The end user a key is bound to refuses any other, whatever field names it. */
function checkBound(principal: Principal, named: string, field: string): void {
  const bound = principal.key.userId;
  if (bound !== null && named !== bound) {
    throw new AppError('END_USER_NOT_ALLOWED', `This key is bound to another end user than the ${field} given`, {
      field,
    });
  }
}

/**
 * The end user of a request whose end user is optional: the one it names (`field` says where, for the
 * refusal), else the key's bound end user, else `default`. A key bound to an end user acts for them alone.
 */
export function endUserOf(principal: Principal, named: string | null | undefined, field = 'user_id'): string {
  if (named === null || named === undefined) return principal.key.userId ?? DEFAULT_END_USER;
  checkBound(principal, named, field);
  return named;
}

/**
 * The end user of a request that must name one (chat completions, memory, documents, code): the one named, else
 * the key's bound end user; with neither, `missing` (a 400 naming the field the operation documents).
 */
export function requiredEndUserOf(
  principal: Principal,
  named: string | null | undefined,
  missing: () => AppError,
  field = 'user_id',
): string {
  if (named === null || named === undefined) {
    if (principal.key.userId !== null) return principal.key.userId;
    throw missing();
  }
  checkBound(principal, named, field);
  return named;
}
