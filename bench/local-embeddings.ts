/**
 * bench:local's embeddings table: a batch of 32 chunk-sized texts a request, against any OpenAI-compatible
 * `/embeddings`, one request at a time and 4 at once (for BENCH_SECONDS, default 10, after a warm-up).
 */
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { messagesFor } from './local-streams.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const BATCH = 32;
/** Chunk-sized texts (the documents the chat streams answer about): what ingestion embeds. */
const TEXTS = Array.from({ length: BATCH }, (_, i) => messagesFor(i)[1]?.content ?? '');

async function batchesPerSecond(url: string, headers: Record<string, string>, connections: number): Promise<number> {
  const dispatcher = new Agent({ connections });
  const body = JSON.stringify({ model: 'PV-EMBED', input: TEXTS });
  const one = async () => {
    const res = await request(url, {
      dispatcher,
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}: ${text.slice(0, 300)}`);
  };
  try {
    for (let i = 0; i < 3; i++) await one();
    let done = 0;
    const until = performance.now() + SECONDS * 1000;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (performance.now() < until) {
          await one();
          done++;
        }
      }),
    );
    return (done / (performance.now() - started)) * 1000;
  } finally {
    await dispatcher.close();
  }
}

export async function embeddingRows(
  name: string,
  url: string,
  headers: Record<string, string>,
): Promise<Array<Array<string | number>>> {
  return [[name, await batchesPerSecond(url, headers, 1), await batchesPerSecond(url, headers, 4)]];
}
