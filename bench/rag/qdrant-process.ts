/**
 * Qdrant for the benchmark: the tests' launcher (the shared binary on free ports, storage in a temp dir,
 * stopped after), and a wait for the optimiser the tests do not need.
 */
import { existsSync } from 'node:fs';
import { QDRANT_BIN, type QdrantServer, startQdrant } from '../../test/support/qdrant.js';

export { startQdrant };
export type QdrantProcess = QdrantServer;

/** Whether the binary is there (without it the bench leaves the Qdrant rows out; it never fails for it). */
export function qdrantAvailable(): boolean {
  return existsSync(QDRANT_BIN);
}

/**
 * Waits until every collection's optimiser is done (status green), so latency is measured on the index
 * Qdrant serves in steady state, not on a brute-force scan of fresh segments. On a loaded machine this
 * can take minutes at 100k points: after `timeoutMs` it gives up and says so (the result carries the note).
 */
export async function waitIndexed(url: string, timeoutMs = 240_000): Promise<string | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const list = (await (await fetch(`${url}/collections`)).json()) as {
      result: { collections: Array<{ name: string }> };
    };
    const pending: string[] = [];
    for (const { name } of list.result.collections) {
      const info = (await (await fetch(`${url}/collections/${name}`)).json()) as {
        result: { status: string; points_count?: number; indexed_vectors_count?: number };
      };
      const r = info.result;
      if (r.status !== 'green') {
        pending.push(
          `${name}: ${r.status}, ${r.indexed_vectors_count ?? '?'} of ${r.points_count ?? '?'} vectors indexed`,
        );
      }
    }
    if (pending.length === 0) return undefined;
    if (Date.now() > deadline) return `still optimising after ${timeoutMs / 1000} s (${pending.join('; ')})`;
    await new Promise((r) => setTimeout(r, 1000));
  }
}
