/** The real embedding model every RAG and memory test uses: where scripts/setup put it. */
export { EMBEDDING_MODEL } from './models.js';

export interface DocumentBody {
  id: string;
  status: 'processing' | 'ready' | 'failed';
  progress: number;
  chunk_count: number;
  title: string;
  failure: { code: string; message: string } | null;
}

export interface MatchBody {
  document_id: string;
  chunk_id: string;
  title: string;
  snippet: string;
  score: number;
  page: number | null;
  char_start: number;
  char_end: number;
}

export interface CitationBody extends Omit<MatchBody, 'document_id' | 'chunk_id'> {
  index: number;
  source: string;
  document_id?: string;
  chunk_id?: string;
}

/** Filler prose: sentences with no planted fact, so the fact's chunk must be found among others. */
export function filler(sentences: number, seed = 0): string {
  const topics = ['river', 'harbour', 'meadow', 'library', 'bakery', 'orchard', 'bridge', 'market', 'forest'];
  const out: string[] = [];
  for (let i = 0; i < sentences; i++) {
    const a = topics[(i + seed) % topics.length];
    const b = topics[(i * 7 + seed + 3) % topics.length];
    out.push(`The ${a} near the ${b} was quiet on day ${i + seed}, and people walked slowly past it.`);
    if (i % 5 === 4) out.push('\n\n');
  }
  return out.join(' ');
}
