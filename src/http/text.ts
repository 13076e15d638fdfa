import { AppError } from '../errors/index.js';

/**
 * Text at the door, for every text field of every operation: what the service will not take, and the 400
 * `INVALID_TEXT` that names the field.
 *
 * - **Not well-formed Unicode** anywhere: a JSON `\ud800` escape with no partner, or percent-encoded bytes in
 *   the URL that are not UTF-8. Stored, such text turns into U+FFFD (PostgreSQL and SQLite both store UTF-8),
 *   so `"a\ud800"`, `"a\udc00"` and `"a\ufffd"` would become one end user; refused, each stays what was sent.
 * - **U+0000** anywhere: PostgreSQL's text cannot hold it (SQLite can), and the same request must mean the
 *   same on both backends. Nothing a client means to send is lost: it is refused before anything is written.
 * - **Other C0 controls and DEL in identifiers** (`user_id`, resource ids): declared in the contract as the
 *   identifier pattern (IDENTIFIER_PATTERN), checked there by ajv and here for multipart fields.
 *
 * Identifiers are then compared exactly as sent: no normalisation, no trimming.
 */

/** The contract's pattern for identifiers: no C0 control character (U+0000–U+001F), no DEL (U+007F). */
export const IDENTIFIER_PATTERN = '^[^\\u0000-\\u001F\\u007F]+$';
const IDENTIFIER = new RegExp(IDENTIFIER_PATTERN, 'u');
export const IDENTIFIER_REASON = 'must not contain control characters (U+0000 to U+001F, U+007F)';

export interface TextProblem {
  field: string;
  reason: string;
}

export function invalidText(problem: TextProblem): AppError {
  return new AppError('INVALID_TEXT', `${problem.field} ${problem.reason}`, { ...problem });
}

/** What is wrong with one string, or undefined. */
function stringProblem(value: string): string | undefined {
  if (!value.isWellFormed()) {
    const at = firstLoneSurrogate(value);
    return `is not well-formed Unicode: an unpaired surrogate (U+${value.charCodeAt(at).toString(16).toUpperCase()}) at character ${at}`;
  }
  const nul = value.indexOf('\0');
  if (nul !== -1) return `contains U+0000 (NUL) at character ${nul}, which is not accepted in any text`;
  return undefined;
}

function firstLoneSurrogate(value: string): number {
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
      else return i;
    } else if (unit >= 0xdc00 && unit <= 0xdfff) return i;
  }
  return -1;
}

/** `messages[0].content`, as validation errors name fields (http/validation-error.ts). */
function child(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return path ? `${path}.${key}` : key;
}

/**
 * The first string (value or object key) in a parsed JSON value that the service will not take, or
 * undefined. Iterative, so a value as deep as the body reader allows cannot overflow the stack.
 */
export function jsonTextProblem(value: unknown, root = ''): TextProblem | undefined {
  const stack: Array<[unknown, string]> = [[value, root]];
  while (stack.length > 0) {
    const [item, path] = stack.pop() as [unknown, string];
    if (typeof item === 'string') {
      const reason = stringProblem(item);
      if (reason) return { field: path || 'body', reason };
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) stack.push([item[i], child(path, i)]);
    } else if (item !== null && typeof item === 'object') {
      const keys = Object.keys(item);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i] as string;
        const reason = stringProblem(key);
        if (reason) return { field: child(path, key), reason: `has a key that ${reason}` };
        stack.push([(item as Record<string, unknown>)[key], child(path, key)]);
      }
    }
  }
  return undefined;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });
const ESCAPES = /(?:%[0-9A-Fa-f]{2})+/g;

/** What is wrong with the bytes a run of percent-escapes stands for, or undefined. */
function escapesProblem(text: string): string | undefined {
  for (const run of text.matchAll(ESCAPES)) {
    const bytes = Buffer.from(run[0].replaceAll('%', ''), 'hex');
    if (bytes.includes(0)) return 'contains U+0000 (NUL, %00), which is not accepted in any text';
    try {
      UTF8.decode(bytes);
    } catch {
      return `is not well-formed Unicode: ${run[0].slice(0, 36)} is not UTF-8`;
    }
  }
  return undefined;
}

/**
 * The request line's text before anything decodes it: percent-escapes in the path and the query must stand
 * for UTF-8 without NUL. (The query parser keeps an undecodable escape as its raw characters, so
 * `?user_id=a%ED%A0%80` would otherwise be the literal user `a%ED%A0%80`.)
 */
export function urlTextProblem(path: string, query: string): TextProblem | undefined {
  if (path.includes('%')) {
    const reason = escapesProblem(path);
    if (reason) return { field: 'path', reason };
  }
  if (!query.includes('%')) return undefined;
  for (const pair of query.split('&')) {
    const reason = escapesProblem(pair);
    if (!reason) continue;
    return { field: queryName(pair.split('=', 1)[0] ?? ''), reason };
  }
  return undefined;
}

/** A query parameter's name for an error message: decoded when it decodes, else `query`. */
function queryName(raw: string): string {
  if (escapesProblem(raw)) return 'query';
  try {
    return decodeURIComponent(raw.replaceAll('+', ' ')) || 'query';
  } catch {
    return raw || 'query';
  }
}

/** An identifier outside the contract's JSON schemas (a multipart form field): the same rule as IDENTIFIER_PATTERN. */
export function identifierProblem(field: string, value: string): TextProblem | undefined {
  const reason = stringProblem(value);
  if (reason) return { field, reason };
  if (value !== '' && !IDENTIFIER.test(value)) return { field, reason: IDENTIFIER_REASON };
  return undefined;
}

/**
 * A multipart form field's value from its raw bytes (busboy hands them over as latin1 text): UTF-8 or a
 * problem. busboy's own decoding would turn bytes that are not UTF-8 into U+FFFD, merging end users as above.
 */
export function formFieldText(field: string, latin1: string): string | TextProblem {
  let text: string;
  try {
    text = UTF8.decode(Buffer.from(latin1, 'latin1'));
  } catch {
    return { field, reason: 'is not well-formed Unicode: its bytes are not UTF-8' };
  }
  const reason = stringProblem(text);
  return reason ? { field, reason } : text;
}
