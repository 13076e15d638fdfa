import type { IncomingMessage, ServerResponse } from 'node:http';
import type { MockState } from './types.js';
import { JSON_HEADERS, MODEL, mockEmbedding } from './wire.js';

/** The handler of POST /embeddings, as OpenAI answers it (inputs in reverse order, so clients must sort by index). */
export function embeddingsHandler(state: MockState): (req: IncomingMessage, res: ServerResponse, raw: string) => void {
  const { record, byModel, requests } = state;

  function answerEmbeddings(
    req: IncomingMessage,
    res: ServerResponse,
    body: { model?: string },
    inputs: readonly string[],
  ): void {
    if (record) {
      requests.push({
        method: 'POST',
        path: req.url ?? '',
        headers: req.headers,
        body,
        model: body.model,
        stream: false,
        behaviour: 'answer',
        receivedAt: Date.now(),
        clientDisconnected: false,
      });
    }
    const data = inputs.map((text, index) => ({ object: 'embedding', index, embedding: mockEmbedding(text) }));
    res.writeHead(200, JSON_HEADERS).end(
      JSON.stringify({
        object: 'list',
        data: data.reverse(),
        model: body.model ?? MODEL,
        usage: { prompt_tokens: inputs.length, total_tokens: inputs.length },
      }),
    );
  }

  return function embeddings(req: IncomingMessage, res: ServerResponse, raw: string): void {
    let body: { model?: string; input?: string | string[] };
    try {
      body = JSON.parse(raw) as typeof body;
    } catch {
      res.writeHead(400, JSON_HEADERS).end(JSON.stringify({ error: { message: 'invalid JSON body' } }));
      return;
    }
    const inputs = typeof body.input === 'string' ? [body.input] : (body.input ?? []);
    // A model scripted with an error status answers its embeddings with it too (an embedding upstream down).
    const scripted = body.model !== undefined ? byModel.get(body.model) : undefined;
    if (scripted?.kind === 'status') {
      res
        .writeHead(scripted.status, JSON_HEADERS)
        .end(
          JSON.stringify(scripted.body ?? { error: { message: `scripted ${scripted.status}`, type: 'server_error' } }),
        );
      return;
    }
    // A model scripted as slow answers each embeddings request after `delayMs`: ingestion that takes at least
    // that long per batch however fast the machine is, for tests of what happens while a document is embedded.
    if (scripted?.kind === 'slow') {
      const timer = setTimeout(() => answerEmbeddings(req, res, body, inputs), scripted.delayMs);
      res.once('close', () => clearTimeout(timer));
      return;
    }
    answerEmbeddings(req, res, body, inputs);
  };
}
