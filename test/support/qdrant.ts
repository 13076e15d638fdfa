import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Backend, backends } from './databases.js';
import { freePort, ROOT } from './processes.js';

/** The Qdrant server binary beside the clone (`../shared/bin/qdrant`); `PVAI_QDRANT_BIN` overrides it. */
export const QDRANT_BIN = process.env.PVAI_QDRANT_BIN ?? join(ROOT, '..', 'shared', 'bin', 'qdrant');

/**
 * Whether the Qdrant suites can run: locally they are skipped without the binary; in CI (CI=true) a
 * missing binary fails instead of silently skipping, as a missing PostgreSQL does.
 */
export function qdrantAvailable(): boolean {
  if (existsSync(QDRANT_BIN)) return true;
  if (process.env.CI === 'true') throw new Error(`CI=true but there is no Qdrant binary at ${QDRANT_BIN}`);
  return false;
}

export interface QdrantServer {
  url: string;
  apiKey?: string | undefined;
  stop(): Promise<void>;
}

/** A real Qdrant on free ports with its own temporary storage; resolves once /readyz answers. */
export async function startQdrant(options: { apiKey?: string } = {}): Promise<QdrantServer> {
  const dir = mkdtempSync(join(tmpdir(), 'pvai-qdrant-'));
  const [httpPort, grpcPort] = [await freePort(), await freePort()];
  const child: ChildProcess = spawn(QDRANT_BIN, [], {
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
      ...(options.apiKey ? { QDRANT__SERVICE__API_KEY: options.apiKey } : {}),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const exited = once(child, 'exit');
  const url = `http://127.0.0.1:${httpPort}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      // SIGTERM; Qdrant then waits for idle keep-alive connections (~5 s), which a throwaway store need not.
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 1000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`qdrant exited with ${child.exitCode} before it was ready: ${stderr}`);
    }
    try {
      // /readyz needs no API key.
      const res = await fetch(`${url}/readyz`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`qdrant did not become ready within 30 s: ${stderr}`);
    }
    await sleep(50);
  }
  return { url, apiKey: options.apiKey, stop };
}

/** Where retrieval runs in an HTTP suite: the service's own database, or Qdrant beside PostgreSQL. */
export interface RagBackend {
  backend: Backend;
  qdrant: boolean;
  label: string;
}

/**
 * The database backends (`backends()`), plus PostgreSQL with retrieval on a real Qdrant when both are
 * there (required in CI, like PostgreSQL).
 */
export function ragBackends(): RagBackend[] {
  const out: RagBackend[] = backends().map((backend) => ({ backend, qdrant: false, label: backend }));
  if (out.some((b) => b.backend === 'postgres') && qdrantAvailable()) {
    out.push({ backend: 'postgres', qdrant: true, label: 'postgres + qdrant' });
  }
  return out;
}

/** Starts what the backend's retrieval needs: a Qdrant for `qdrant`, nothing otherwise. */
export async function startRetrieval(rag: RagBackend): Promise<Retrieval> {
  if (!rag.qdrant) return { config: {}, env: { QDRANT_URL: '' }, stop: async () => undefined };
  const server = await startQdrant();
  return { url: server.url, config: { qdrantUrl: server.url }, env: { QDRANT_URL: server.url }, stop: server.stop };
}

export interface Retrieval {
  /** The Qdrant's URL, when retrieval is on Qdrant. */
  url?: string;
  /** For `startTestServer`'s config. */
  config: { qdrantUrl?: string };
  /** For a server process (`QDRANT_URL` empty, not absent, when none: the test's own must not leak in). */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/** How many points of the user's the Qdrant holds (proof that a suite's chunks really went there). */
export async function qdrantPoints(url: string, userId: string, collection = 'pvai_chunks'): Promise<number> {
  const res = await fetch(`${url}/collections/${collection}/points/count`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ exact: true, filter: { must: [{ key: 'user_id', match: { value: userId } }] } }),
  });
  if (!res.ok) throw new Error(`counting points: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { result: { count: number } }).result.count;
}
