/**
 * bench:memory's labelled set (bench/memory/turns.jsonl): user turns, each with the facts it states
 * (kind, and the words a memory of it must hold) or none, and corrections with the turns before them and
 * the old value they replace. Written for evaluation only: the statement model is trained on another set
 * (training/memory/), and the set that accepts the work is a third one, not in the repository.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface LabelledTurn {
  id: string;
  say: string;
  facts: Array<{ kind: string; expect: string[] }>;
  before?: string[];
  old?: string[];
  /** everyday.jsonl: `dev` is looked at while the extractor is worked on, the held-out parts never are. */
  part?: 'dev' | 'held-out' | 'held-out-2';
}

export type TurnKind = 'fact' | 'none' | 'correction';

export function kindOf(turn: LabelledTurn): TurnKind {
  if (turn.old) return 'correction';
  return turn.facts.length > 0 ? 'fact' : 'none';
}

export function labelledTurns(file = 'turns.jsonl'): LabelledTurn[] {
  return readFileSync(join(import.meta.dirname, file), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as LabelledTurn);
}

export interface StoredMemory {
  id: string;
  content: string;
  /** Every text the memory held, the current one included (from its history). */
  history: string[];
}

const fold = (text: string) => text.normalize('NFC').toLowerCase();
export const holds = (text: string, words: readonly string[]) => words.every((w) => fold(text).includes(fold(w)));

export interface TurnScore {
  /** Facts of the turn some memory holds, of how many (fact and correction turns). */
  kept: number;
  facts: number;
  /** A turn that states nothing left a memory behind. */
  falseMemory: boolean;
  /** A correction superseded the memory of the old value (its history keeps it) and no memory states the old value alone. */
  corrected: boolean;
}

/** How the user's memories after the turn (and the turns before it) score against its labels. */
export function score(turn: LabelledTurn, memories: readonly StoredMemory[]): TurnScore {
  const kept = turn.facts.filter((f) => memories.some((m) => holds(m.content, f.expect))).length;
  const kind = kindOf(turn);
  let corrected = false;
  if (kind === 'correction') {
    const expect = turn.facts[0]?.expect ?? [];
    const old = turn.old ?? [];
    const current = memories.find((m) => holds(m.content, expect));
    const stale = memories.some((m) => old.some((o) => holds(m.content, [o])) && !holds(m.content, expect));
    corrected = current !== undefined && !stale && current.history.some((h) => old.some((o) => holds(h, [o])));
  }
  return { kept, facts: turn.facts.length, falseMemory: kind === 'none' && memories.length > 0, corrected };
}
