import type { Embedder } from '../../retrieval/index.js';
import type { CandidateFact, Extraction, FactExtractor } from '../types.js';
import { lexicalFeatures } from './features.js';
import type { StatementClass } from './kinds.js';
import { StatementModel } from './statement-model.js';
import { storedStatementModel } from './statement-model-file.js';
import { mayState, type Statement, statementsOf } from './statements.js';
import { thirdPerson } from './third-person.js';

/** A name as people give it: "name's Zoë", "call me Bex", "I'm Ines", "olek here", "it's Siobhán". */
const NAME = String.raw`((?:(?:dr|mr|ms|mrs|prof)\.?\s+)?[\p{L}'-]+(?:\s+\p{Lu}[\p{L}'-]+){0,2})`;
const NAME_PATTERNS = [
  new RegExp(
    String.raw`\b(?:name is|name's|names|call me|calls me|called|go by|goes by|address me as|known as)\s+${NAME}`,
    'iu',
  ),
  new RegExp(
    String.raw`^(?:i'm|im|i am|it's|its|this is|here's|heres)\s+${NAME}(?:\s+(?:here|speaking|writing|again))*$`,
    'iu',
  ),
  new RegExp(String.raw`^${NAME}\s+(?:here|speaking|writing)\b`, 'iu'),
];

/**
 * Kinds of one value the user states of themselves in words that leave no doubt: their own name ("My
 * name's Sean", not "My sister's name is Ana") and where they stand in love ("I'm engaged"). The model
 * reads such a statement now as one kind, now as another ("I'm engaged" as family); a memory of the wrong
 * kind is never superseded by the fact that corrects it ("We got married in August", relationship).
 */
const OWN_NAME = /^(?:(?:my|our)\s+)?(?:name is|name's|names|call me|i go by|i'm called|im called)\s/i;
const OWN_RELATIONSHIP =
  /^(?:i'm|im|i am|i've been|ive been|we're|we are|we got|we've been|i got|just got)\s+(?:now\s+|just\s+|recently\s+|happily\s+)?(?:single|engaged|married|divorced|widowed|separated|in a relationship|dating)\b/i;

function kindOf(statement: Statement, judged: StatementClass): StatementClass {
  if (OWN_NAME.test(statement.text)) return 'name';
  if (OWN_RELATIONSHIP.test(statement.text)) return 'relationship';
  return judged;
}

/** The stored sentence for a statement of a kind: names as "The user's name is …", everything else as said. */
function contentOf(kind: StatementClass, statement: Statement, said: string): string {
  if (kind === 'name') {
    for (const pattern of NAME_PATTERNS) {
      const name = statement.text.match(pattern)?.[1];
      if (name) return `The user's name is ${name.charAt(0).toUpperCase()}${name.slice(1)}.`;
    }
  }
  return said;
}

export interface StatementExtractorOptions {
  /** The service's embedder: the model's default head reads its vectors when it is the one it was trained on. */
  embedder?: Embedder | undefined;
}

/**
 * The default extractor, on the embedded default with no upstream: each statement of the turn
 * (`statements.ts`) is put in the third person (`third-person.ts`) and judged by the statement model
 * (`statement-model.ts`: a softmax regression over the statement's MiniLM embedding and its word features,
 * trained offline on labelled turns, its weights a committed data file, `statement-model.json`) as a lasting
 * fact of some kind, or none. The kind is the memory's slot, which reconciliation uses to supersede. A server whose embedder is
 * another model runs the words-only head. One embedding per statement, reused to store the memory.
 */
export class StatementExtractor implements FactExtractor {
  readonly name = 'statements';
  readonly #embedder: Embedder | undefined;
  readonly #model: StatementModel;

  constructor(options: StatementExtractorOptions = {}) {
    const { heads } = storedStatementModel();
    const full = new StatementModel(heads.embeddingAndWords);
    const reads = options.embedder !== undefined && full.reads(options.embedder.id);
    this.#model = reads ? full : new StatementModel(heads.words);
    this.#embedder = reads ? options.embedder : undefined;
  }

  /** Which head runs: `embedding+words` or `words`. */
  get head(): string {
    return this.#embedder ? 'embedding+words' : 'words';
  }

  mayState(turn: string): boolean {
    return mayState(turn);
  }

  async extract(userTurns: readonly string[], signal: AbortSignal): Promise<Extraction> {
    const facts: CandidateFact[] = [];
    const forget: CandidateFact[] = [];
    for (const turn of userTurns) {
      const found = statementsOf(turn);
      for (const text of found.forget) forget.push({ content: thirdPerson(text), slot: null });
      if (found.statements.length === 0) continue;
      const said = found.statements.map((s) => thirdPerson(s.text));
      const vectors = this.#embedder ? await this.#embedder.embed(said, signal) : [];
      found.statements.forEach((statement, i) => {
        const verdict = this.#model.judge(lexicalFeatures(statement.raw), vectors[i]);
        if (!verdict.fact && !statement.remember) return;
        const kind = verdict.kind === 'none' ? 'none' : kindOf(statement, verdict.kind);
        const content = contentOf(kind, statement, said[i] as string);
        facts.push({
          content,
          slot: kind === 'none' ? null : kind,
          ...(statement.correction ? { correction: { replaces: statement.replaces } } : {}),
          ...(statement.changed ? { changed: true } : {}),
          // The vector is the stored text's only when the text is the one embedded.
          ...(content === said[i] && vectors[i] ? { vector: vectors[i] } : {}),
        });
      });
    }
    return { facts, forget };
  }
}
