import { CONTENT_LIMIT } from './sql-request-log-store.js';

/**
 * The text of a request or an answer as the request logs keep it (for an account with `log_content` on): chat
 * messages and Responses input and output items read as `role: text` lines, text parts only (an image or a file is
 * named, never copied). Collection stops one character past the store's bound, so a long conversation is never
 * joined whole only to be cut, and the store still sees that it was cut.
 */
const ENOUGH = CONTENT_LIMIT + 1;

/** The text of a content value: a string, or parts whose `text` is kept and whose other kinds are named. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const out: string[] = [];
  for (const part of content) {
    if (part && typeof part === 'object') {
      const { type, text, refusal } = part as { type?: unknown; text?: unknown; refusal?: unknown };
      if (typeof text === 'string') out.push(text);
      else if (typeof refusal === 'string') out.push(refusal);
      else if (typeof type === 'string') out.push(`[${type}]`);
    }
  }
  return out.join('\n');
}

/** Chat messages, or Responses items (or its string input), as `role: text` lines, at most CONTENT_LIMIT + 1 long. */
export function conversationText(messages: unknown): string {
  if (typeof messages === 'string') return messages.slice(0, ENOUGH);
  if (!Array.isArray(messages)) return '';
  let text = '';
  for (const message of messages) {
    if (!message || typeof message !== 'object') continue;
    const { role, type, content, output } = message as Record<string, unknown>;
    const who = typeof role === 'string' ? role : typeof type === 'string' ? type : 'item';
    const said = content !== undefined ? contentText(content) : typeof output === 'string' ? output : '';
    text += `${text === '' ? '' : '\n'}${who}: ${said}`;
    if (text.length >= ENOUGH) return text.slice(0, ENOUGH);
  }
  return text;
}

/** An answer's text gathered as it streams, bounded like the rest. */
export class AnswerText {
  #parts: string[] = [];
  #length = 0;

  add(text: string): void {
    if (this.#length >= ENOUGH) return;
    this.#parts.push(text);
    this.#length += text.length;
  }

  text(): string {
    return this.#parts.join('').slice(0, ENOUGH);
  }
}
