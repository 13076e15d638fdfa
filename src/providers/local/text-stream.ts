import type { LlamaModel, Token } from 'node-llama-cpp';

const REPLACEMENT_CHAR = '\uFFFD';
/** A UTF-8 character spans at most 4 byte-tokens; waiting longer means the model really produced U+FFFD. */
const MAX_PENDING_TOKENS = 4;
/** Tokens of left context given to the detokenizer so leading-space rules (SentencePiece) come out right. */
const DETOKENIZE_CONTEXT = 8;

/**
 * Turns sampled tokens into text pieces. Tokens that end in the middle of a multi-byte character
 * decode to U+FFFD on their own, so they are held until the character is complete.
 */
export class TokenTextDecoder {
  private readonly committed: Token[] = [];
  private readonly pending: Token[] = [];

  constructor(private readonly model: LlamaModel) {}

  push(token: Token): string {
    this.pending.push(token);
    const text = this.model.detokenize(this.pending, false, this.committed.slice(-DETOKENIZE_CONTEXT));
    if (text.endsWith(REPLACEMENT_CHAR) && this.pending.length < MAX_PENDING_TOKENS) return '';
    this.committed.push(...this.pending.splice(0));
    return text;
  }

  /** Whatever is still held back (an incomplete character at the very end). */
  flush(): string {
    if (this.pending.length === 0) return '';
    const text = this.model.detokenize(this.pending, false, this.committed.slice(-DETOKENIZE_CONTEXT));
    this.committed.push(...this.pending.splice(0));
    return text;
  }
}

/**
 * Finds stop sequences in streamed text. Text that could still be the start of a stop sequence is
 * held back, so a client never sees part of a stop string that later completes.
 */
export class StopSequenceMatcher {
  private buffer = '';
  private readonly stops: string[];

  constructor(stops: readonly string[]) {
    this.stops = [...new Set(stops.filter((stop) => stop.length > 0))];
  }

  /** Adds text; returns what may be shown now, and whether a stop sequence was reached (text after it is dropped). */
  push(text: string): { release: string; stopped: boolean } {
    this.buffer += text;
    let stopAt = -1;
    for (const stop of this.stops) {
      const index = this.buffer.indexOf(stop);
      if (index >= 0 && (stopAt < 0 || index < stopAt)) stopAt = index;
    }
    if (stopAt >= 0) {
      const release = this.buffer.slice(0, stopAt);
      this.buffer = '';
      return { release, stopped: true };
    }
    const hold = this.partialStopLength();
    const release = this.buffer.slice(0, this.buffer.length - hold);
    this.buffer = this.buffer.slice(this.buffer.length - hold);
    return { release, stopped: false };
  }

  /** Releases held text when generation ended for another reason. */
  flush(): string {
    const rest = this.buffer;
    this.buffer = '';
    return rest;
  }

  /** Length of the longest buffer suffix that is a proper prefix of some stop sequence. */
  private partialStopLength(): number {
    let longest = 0;
    for (const stop of this.stops) {
      const max = Math.min(stop.length - 1, this.buffer.length);
      for (let length = max; length > longest; length--) {
        if (this.buffer.endsWith(stop.slice(0, length))) {
          longest = length;
          break;
        }
      }
    }
    return longest;
  }
}
