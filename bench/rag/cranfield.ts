/**
 * The Cranfield collection (../shared/datasets/cranfield): 1,400 aeronautics abstracts, 225 queries and
 * graded relevance judgements. Queries are numbered by their position in cran.qry (1–225), not by their
 * `.I` ids, which skip numbers; that is how cranqrel refers to them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface CranDoc {
  id: string;
  title: string;
  /** Title and abstract (as indexed by every system in the benchmark). */
  text: string;
}

export interface CranQuery {
  /** Position in cran.qry, 1-based, as a string (the qrels' numbering). */
  id: string;
  text: string;
}

/** Query id → document id → gain (> 0 only; "not relevant" rows are left out). */
export type Qrels = Map<string, Map<string, number>>;

export interface Cranfield {
  docs: CranDoc[];
  queries: CranQuery[];
  qrels: Qrels;
}

/** Grade 1 (complete answer) … 4 (least relevant) → nDCG gain 4 … 1; grade -1 (not relevant) → 0. */
export function gainOf(grade: number): number {
  return grade >= 1 && grade <= 4 ? 5 - grade : 0;
}

/** Splits an SMART-format file into records of fields (`.I` value plus `.T`, `.A`, `.B`, `.W` bodies). */
function records(source: string): Array<{ id: string; fields: Map<string, string> }> {
  const out: Array<{ id: string; fields: Map<string, string> }> = [];
  let current: { id: string; fields: Map<string, string> } | undefined;
  let field: string | undefined;
  let lines: string[] = [];
  const flush = () => {
    if (current && field) current.fields.set(field, lines.join('\n').trim());
    lines = [];
  };
  for (const line of source.split('\n')) {
    const m = /^\.([ITABW])(?:\s+(.*))?$/.exec(line.trimEnd());
    if (m) {
      flush();
      if (m[1] === 'I') {
        current = { id: (m[2] ?? '').trim(), fields: new Map() };
        out.push(current);
        field = undefined;
      } else field = m[1];
    } else lines.push(line);
  }
  flush();
  return out;
}

/**
 * Cranfield's text is hard-wrapped at ~70 columns, a paragraph starting with an indented line, and has a
 * space before punctuation (" ."). Unwrapped into paragraphs and rejoined, so sentence and paragraph ends
 * are where the chunker looks for them (it treats every line end as a boundary).
 */
function tidy(text: string): string {
  return text
    .replace(/\n(?=[ \t])/g, '\u0000')
    .replace(/\s*\n\s*/g, ' ')
    .split('\u0000')
    .map((p) =>
      p
        .replace(/[ \t]+/g, ' ')
        .replace(/ ([.,;:?!])/g, '$1')
        .trim(),
    )
    .filter((p) => p.length > 0)
    .join('\n\n');
}

export function loadCranfield(dir: string): Cranfield {
  const docs = records(readFileSync(join(dir, 'cran.all.1400'), 'utf8')).map((r) => {
    const title = tidy(r.fields.get('T') ?? '').replace(/\s+/g, ' ');
    const body = tidy(r.fields.get('W') ?? '');
    // The .W field of this copy already starts with the title: it is not added a second time.
    const text = body.replace(/\s+/g, ' ').startsWith(title) ? body : `${title}\n\n${body}`;
    return { id: r.id, title, text };
  });
  const queries = records(readFileSync(join(dir, 'cran.qry'), 'utf8')).map((r, i) => ({
    id: String(i + 1),
    text: tidy(r.fields.get('W') ?? '').replace(/\s+/g, ' '),
  }));
  const qrels: Qrels = new Map();
  for (const line of readFileSync(join(dir, 'cranqrel'), 'utf8').split('\n')) {
    const [q, d, g] = line.trim().split(/\s+/);
    if (!q || !d || g === undefined) continue;
    const gain = gainOf(Number(g));
    if (gain <= 0) continue;
    const judged = qrels.get(q) ?? new Map<string, number>();
    qrels.set(q, judged);
    judged.set(d, Math.max(gain, judged.get(d) ?? 0));
  }
  return { docs, queries, qrels };
}
