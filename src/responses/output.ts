import { type Citation, supportedSentences } from '../chat/index.js';
import type { ToolCall } from '../providers/index.js';
import { fusedRelevance } from '../retrieval/index.js';
import type { CodeRun } from './code-interpreter.js';
import { newId } from './input.js';
import type { BuiltInTools } from './request.js';
import type { Annotation, OutputItem } from './types.js';

/** Where the sandbox runs code, as OpenAI names a container: pvai has one kind, made anew for each run. */
const SANDBOX_CONTAINER = 'cntr_pvai_sandbox';

/** `[1]`, `[2, 3]`: the numbered sources an answer cites (the prompt asks for them so). */
const MARKER = /\[(\d+(?:\s*,\s*\d+)*)\]/g;

/**
 * The answer's annotations: each `[n]` it writes, for a source `n` it was given, is a `file_citation` at the
 * marker (with the document's id and title, and pvai's chunk, page and character span) or a `url_citation`
 * over the marker's span. An answer that cites no marker is still attributed: each sentence a page supports
 * (`supportedSentences`) is a `url_citation` over that sentence, and every document and every page no sentence
 * went to is cited at the end of the text (`file_citation` `index`, `url_citation` `start_index` = `end_index` =
 * its length, where a footnote goes): the sources it was given, for the reader to check.
 */
function annotationsOf(text: string, citations: readonly Citation[]): Annotation[] {
  const byIndex = new Map(citations.map((c) => [c.index, c]));
  const out: Annotation[] = [];
  for (const match of text.matchAll(MARKER)) {
    for (const n of (match[1] ?? '').split(',').map((v) => Number(v.trim()))) {
      const cited = byIndex.get(n);
      if (cited) out.push(annotation(cited, match.index, match.index + match[0].length));
    }
  }
  if (out.length > 0) return out;
  const seen = new Set<string>();
  // Documents take part in the match so that a sentence a document supports better is not given to a page;
  // a document's citation stays at the end of the text, where file_search has always put it.
  for (const { start, end, citation } of supportedSentences(text, citations)) {
    if (citation.source !== 'web' || !citation.url) continue;
    seen.add(`web ${citation.url}`);
    out.push(annotation(citation, start, end));
  }
  for (const c of citations) {
    const key = c.source === 'web' ? c.url && `web ${c.url}` : c.document_id && `document ${c.document_id}`;
    if (!key || seen.has(key)) continue;
    seen.add(key);
    out.push(annotation(c, text.length, text.length));
  }
  return out;
}

function annotation(c: Citation, start: number, end: number): Annotation {
  if (c.source === 'web')
    return { type: 'url_citation', url: c.url ?? '', title: c.title, start_index: start, end_index: end };
  return {
    type: 'file_citation',
    file_id: c.document_id ?? '',
    filename: c.title,
    index: start,
    ...(c.chunk_id ? { chunk_id: c.chunk_id } : {}),
    ...(c.page !== undefined ? { page: c.page } : {}),
    ...(c.char_start !== undefined ? { char_start: c.char_start } : {}),
    ...(c.char_end !== undefined ? { char_end: c.char_end } : {}),
  };
}

/**
 * The built-in searches that ran, as output items before the answer: `file_search_call` (its results, the
 * chunks the model was given, when `include` asks) and `web_search_call` (the pages whose passages it was
 * given, when `include` asks).
 */
export function searchItems(
  builtIns: BuiltInTools,
  query: string,
  citations: readonly Citation[],
  include: ReadonlySet<string>,
): OutputItem[] {
  const items: OutputItem[] = [];
  if (builtIns.fileSearch) {
    const documents = citations.filter((c) => c.source === 'document');
    items.push({
      id: newId('fs'),
      type: 'file_search_call',
      status: 'completed',
      queries: [query],
      results: include.has('file_search_call.results')
        ? documents.map((c) => ({
            file_id: c.document_id ?? '',
            filename: c.title,
            score: Math.round(fusedRelevance(c.score) * 10_000) / 10_000,
            text: c.snippet,
            attributes: {},
            ...(c.chunk_id ? { chunk_id: c.chunk_id } : {}),
            ...(c.page !== undefined ? { page: c.page } : {}),
            ...(c.char_start !== undefined ? { char_start: c.char_start } : {}),
            ...(c.char_end !== undefined ? { char_end: c.char_end } : {}),
          }))
        : null,
    });
  }
  if (builtIns.webSearch) {
    const urls = [...new Set(citations.flatMap((c) => (c.source === 'web' && c.url ? [c.url] : [])))];
    const sources = include.has('web_search_call.action.sources') || include.has('web_search_call.results');
    items.push({
      id: newId('ws'),
      type: 'web_search_call',
      status: 'completed',
      action: { type: 'search', query, ...(sources ? { sources: urls.map((url) => ({ type: 'url', url })) } : {}) },
    });
  }
  return items;
}

export function messageItem(
  id: string,
  text: string,
  citations: readonly Citation[],
  status: OutputItem['status'],
): OutputItem {
  return {
    id,
    type: 'message',
    status,
    role: 'assistant',
    content: [{ type: 'output_text', text, annotations: annotationsOf(text, citations), logprobs: [] }],
  };
}

export function functionCallItem(id: string, call: ToolCall, status: OutputItem['status'] = 'completed'): OutputItem {
  return {
    id,
    type: 'function_call',
    status,
    call_id: call.id,
    name: call.function.name,
    arguments: call.function.arguments,
  };
}

export function codeItem(id: string, run: CodeRun | undefined, code: string | null): OutputItem {
  return {
    id,
    type: 'code_interpreter_call',
    status: run ? run.status : 'interpreting',
    code: run?.code ?? code,
    container_id: SANDBOX_CONTAINER,
    outputs: run ? [{ type: 'logs', logs: run.logs }] : null,
  };
}
