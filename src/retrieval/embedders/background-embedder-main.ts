import { serveParent } from '../../kernel/index.js';
import { LocalEmbedder, type LocalEmbedderOptions } from './local-embedder.js';

/** The messages between the server and its background embedder (`background-embedder.ts`). */
export type ToBackgroundEmbedder =
  | { t: 'open'; options: LocalEmbedderOptions }
  | { t: 'embed'; id: number; texts: string[] }
  | { t: 'abort'; id: number };

export type FromBackgroundEmbedder =
  /** The model is loaded: calls may come. */
  | { t: 'ready' }
  | { t: 'vectors'; id: number; vectors: Array<Float32Array | undefined>; tokens: number }
  | { t: 'error'; id: number; name: string; message: string };

/** Embeds what the server sends, one call at a time in arrival order, each abortable while it waits or runs. */
function serveBackgroundEmbedder(
  send: (message: FromBackgroundEmbedder) => void,
): (message: ToBackgroundEmbedder) => void {
  let embedder: LocalEmbedder | undefined;
  const aborts = new Map<number, AbortController>();
  let queue: Promise<void> = Promise.resolve();
  return (message) => {
    switch (message.t) {
      case 'open': {
        const opened = new LocalEmbedder(message.options);
        embedder = opened;
        // A model that cannot load ends the process: the server's own embedder keeps answering.
        opened.dimension().then(
          () => send({ t: 'ready' }),
          (err: unknown) => {
            process.stderr.write(`[background embedder] ${err instanceof Error ? err.message : String(err)}\n`);
            process.exit(1);
          },
        );
        return;
      }
      case 'abort':
        aborts.get(message.id)?.abort();
        return;
      case 'embed': {
        const controller = new AbortController();
        aborts.set(message.id, controller);
        queue = queue.then(async () => {
          let tokens = 0;
          try {
            if (!embedder) throw new Error('the background embedder has no model');
            const vectors = await embedder.embed(message.texts, controller.signal, (n) => {
              tokens += n;
            });
            send({ t: 'vectors', id: message.id, vectors, tokens });
          } catch (err) {
            const error = err instanceof Error ? err : new Error(String(err));
            send({ t: 'error', id: message.id, name: error.name, message: error.message });
          } finally {
            aborts.delete(message.id);
          }
        });
        return;
      }
    }
  };
}

// Started as the entry of the process `background-embedder.ts` forks (importing this module elsewhere starts nothing).
if (process.env.PVAI_BACKGROUND_EMBEDDER === '1' && process.send) serveParent(serveBackgroundEmbedder);
