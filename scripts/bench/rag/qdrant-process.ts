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
 * Waits until every collection's vectors are in its HNSW graph (status green, nothing left to index), so
 * latency is measured on the index Qdrant serves in steady state, not on a brute-force scan of fresh points.
 */
export async function waitIndexed(url: string, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const list = (await (await fetch(`${url}/collections`)).json()) as {
      result: { collections: Array<{ name: string }> };
    };
    let pending = false;
    for (const { name } of list.result.collections) {
      const info = (await (await fetch(`${url}/collections/${name}`)).json()) as {
        result: { status: string; optimizer_status: unknown };
      };
      if (info.result.status !== 'green' || info.result.optimizer_status !== 'ok') pending = true;
    }
    if (!pending) return;
    if (Date.now() > deadline) throw new Error('Qdrant still optimising after 3 minutes');
    await new Promise((r) => setTimeout(r, 500));
  }
}
