/** A Qdrant server for the benchmark: the shared binary on free ports, storage in a temp dir, stopped after. */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, ROOT, waitForHealthy } from '../lib.js';

export const QDRANT_BIN = process.env.BENCH_QDRANT_BIN ?? join(ROOT, '..', 'shared', 'bin', 'qdrant');

export interface QdrantProcess {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

export function qdrantAvailable(): boolean {
  return existsSync(QDRANT_BIN);
}

export async function startQdrant(): Promise<QdrantProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'pvai-bench-qdrant-'));
  const httpPort = await freePort();
  const grpcPort = await freePort();
  const child = spawn(QDRANT_BIN, [], {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? '',
      QDRANT__SERVICE__HOST: '127.0.0.1',
      QDRANT__SERVICE__HTTP_PORT: String(httpPort),
      QDRANT__SERVICE__GRPC_PORT: String(grpcPort),
      QDRANT__STORAGE__STORAGE_PATH: join(dir, 'storage'),
      QDRANT__STORAGE__SNAPSHOTS_PATH: join(dir, 'snapshots'),
      QDRANT__TELEMETRY_DISABLED: 'true',
      QDRANT__LOG_LEVEL: 'WARN',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${httpPort}`;
  await waitForHealthy(url, child, '/readyz');
  return {
    url,
    child,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
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
