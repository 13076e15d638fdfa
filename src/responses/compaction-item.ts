import { AppError } from '../errors/index.js';

/** The format of a `compaction` item's `encrypted_content` (the version pvai writes and reads). */
const FORMAT = 1;

/**
 * A compaction item's `encrypted_content`: pvai's own opaque form of the summary, base64url of
 * `{"v":1,"summary":…}`. Not encrypted: the summary is the account's own text, and a client that altered it
 * could as well have sent the text as a message.
 */
export function sealSummary(summary: string): string {
  return Buffer.from(JSON.stringify({ v: FORMAT, summary }), 'utf8').toString('base64url');
}

/** The summary a compaction item carries; 400 naming `field` for content pvai did not write. */
export function openSummary(content: unknown, field: string): string {
  const refused = () =>
    new AppError('INVALID_PARAMETER', `${field} is not a compaction made by POST /z1/responses/compact`, {
      field,
      reason: 'is not a compaction of this service',
    });
  if (typeof content !== 'string' || !/^[A-Za-z0-9_-]*$/.test(content)) throw refused();
  try {
    const parsed = JSON.parse(Buffer.from(content, 'base64url').toString('utf8')) as { v?: unknown; summary?: unknown };
    if (parsed.v !== FORMAT || typeof parsed.summary !== 'string') throw refused();
    return parsed.summary;
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw refused();
  }
}

/** How a compaction reads in a later conversation: a system turn in its place. */
export function summaryTurn(summary: string): string {
  return `Summary of the conversation before this point:\n${summary}`;
}
