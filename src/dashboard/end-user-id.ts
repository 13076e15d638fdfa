import { AppError } from '../errors/index.js';
import { identifierProblem, invalidText } from '../http/index.js';
import { type Html, html } from './html.js';

/** The contract's longest user id (`UserIdQuery`, `user_id` in every body), in characters as JSON Schema counts. */
const MAX_USER_ID_CHARS = 256;

/**
 * The end user a dashboard form or link names, exactly as given, refused as the API refuses it: the API compares
 * user ids exactly (`" ws-X"` and `"ws-X"` are two end users), so a trimmed or cut id would show, export or erase
 * another user's data. Undefined when none is named (an empty field: the page asks for one).
 */
export function endUserIdOf(value: unknown, field = 'user'): string | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  const problem = identifierProblem(field, value);
  if (problem) throw invalidText(problem);
  if ([...value].length > MAX_USER_ID_CHARS) {
    throw new AppError('INVALID_PARAMETER', `${field} must NOT have more than ${MAX_USER_ID_CHARS} characters`, {
      field,
      reason: `must NOT have more than ${MAX_USER_ID_CHARS} characters`,
    });
  }
  return value;
}

/** The same, where an end user must be named: none is the page's 404. */
export function requiredEndUserIdOf(value: unknown, missing: string): string {
  const userId = endUserIdOf(value);
  if (userId === undefined) throw new AppError('NOT_FOUND', missing);
  return userId;
}

const EDGE_SPACE = /^\s|\s$/u;

/**
 * A user id as the pages show it: in `<code>`, with each space at either end drawn as ␣ and a badge saying so,
 * since `" ws-X"` and `"ws-X"` would otherwise look the same and are not the same end user.
 */
export function userIdMarkup(userId: string): Html {
  if (!EDGE_SPACE.test(userId)) return html`<code>${userId}</code>`;
  const lead = /^\s+/u.exec(userId)?.[0] ?? '';
  const trail = userId.length > lead.length ? (/\s+$/u.exec(userId)?.[0] ?? '') : '';
  const middle = userId.slice(lead.length, userId.length - trail.length);
  const marks = (spaces: string) =>
    html`<span class="space-mark" aria-hidden="true">${'␣'.repeat([...spaces].length)}</span>`;
  return html`<code title="${JSON.stringify(userId)}">${marks(lead)}${middle}${marks(trail)}</code>
<span class="badge bad">has leading/trailing spaces</span>`;
}
