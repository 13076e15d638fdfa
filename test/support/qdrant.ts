import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
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
      child.kill('SIGTERM');
      await exited;
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
