import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './processes.js';
import { QDRANT_BIN } from './qdrant.js';

/** One node of a cluster: its REST URL, and stop/start that keep its storage (a restart is the same peer). */
export interface QdrantNode {
  url: string;
  /** Stops the process (SIGTERM by default; SIGKILL is a crash) and waits for it to exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same ports and storage; resolves when its REST API answers. */
  start(): Promise<void>;
  running(): boolean;
}

export interface QdrantCluster {
  nodes: QdrantNode[];
  /** The nodes' URLs, comma-separated: QDRANT_URL's form for a cluster. */
  urls: string;
  /** Stops every node and removes their storage. */
  stop(): Promise<void>;
}

/**
 * Qdrant's distributed mode (raft, shards, replicas) with the real binary: `size` nodes on free ports, each
 * with its own storage, the first started alone and the others bootstrapped from it (shared/bin/README.md).
 * Resolves once every node sees all `size` peers, so a collection created next is spread over all of them.
 */
export async function startQdrantCluster(size = 3): Promise<QdrantCluster> {
  const root = mkdtempSync(join(tmpdir(), 'pvai-qdrant-cluster-'));
  const nodes: Array<QdrantNode & { kill(): Promise<void> }> = [];
  let first: string | undefined;
  try {
    for (let i = 0; i < size; i++) {
      const node = await clusterNode(join(root, `node${i}`), first);
      nodes.push(node);
      first ??= node.p2p;
      await node.start();
    }
    const deadline = Date.now() + 30_000;
    for (const node of nodes) {
      while ((await peers(node.url)) < size) {
        if (Date.now() > deadline) throw new Error(`qdrant node ${node.url} did not see ${size} peers within 30 s`);
        await sleep(100);
      }
    }
  } catch (err) {
    await Promise.all(nodes.map((n) => n.kill()));
    rmSync(root, { recursive: true, force: true });
    throw err;
  }
  return {
    nodes,
    urls: nodes.map((n) => n.url).join(','),
    stop: async () => {
      await Promise.all(nodes.map((n) => n.kill()));
      rmSync(root, { recursive: true, force: true });
    },
  };
}

async function clusterNode(dir: string, bootstrap: string | undefined) {
  mkdirSync(dir, { recursive: true });
  const [httpPort, grpcPort, p2pPort] = [await freePort(), await freePort(), await freePort()];
  const url = `http://127.0.0.1:${httpPort}`;
  const p2p = `http://127.0.0.1:${p2pPort}`;
  let child: ChildProcess | undefined;
  let exited: Promise<unknown> = Promise.resolve();
  let stderr = '';
  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (!child || !running()) return;
    const self = child;
    self.kill(signal);
    // Qdrant waits for idle keep-alive connections after SIGTERM (~5 s); past 10 s it is killed.
    const timer = setTimeout(() => self.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  const start = async () => {
    if (running()) return;
    stderr = '';
    // A restarted peer finds its identity and the cluster in its storage: --bootstrap is for the first join only,
    // but harmless later (Qdrant ignores it once the node has a raft state).
    const args = ['--uri', p2p, ...(bootstrap ? ['--bootstrap', bootstrap] : [])];
    const spawned = spawn(QDRANT_BIN, args, {
      cwd: dir,
      env: {
        PATH: process.env.PATH ?? '',
        QDRANT__CLUSTER__ENABLED: 'true',
        QDRANT__CLUSTER__P2P__PORT: String(p2pPort),
        QDRANT__SERVICE__HOST: '127.0.0.1',
        QDRANT__SERVICE__HTTP_PORT: String(httpPort),
        QDRANT__SERVICE__GRPC_PORT: String(grpcPort),
        QDRANT__STORAGE__STORAGE_PATH: join(dir, 'storage'),
        QDRANT__STORAGE__SNAPSHOTS_PATH: join(dir, 'snapshots'),
        QDRANT__TELEMETRY_DISABLED: 'true',
        QDRANT__LOG_LEVEL: 'WARN',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child = spawned;
    spawned.stderr?.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
    exited = once(spawned, 'exit');
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (!running()) throw new Error(`qdrant node ${url} exited before it answered: ${stderr}`);
      try {
        // /readyz is not used: a node whose peers hold shards it waits for is not "ready" while one is down.
        const res = await nodeFetch(`${url}/cluster`);
        await res.arrayBuffer();
        if (res.ok) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`qdrant node ${url} did not answer within 30 s: ${stderr}`);
      await sleep(100);
    }
  };
  return { url, p2p, stop, start, running, kill: () => stop('SIGKILL') };
}

/**
 * A request to a node on a connection closed after it: a node stopped with SIGTERM waits for its idle kept-alive
 * connections (~5 s) before it exits, which a test stopping nodes need not.
 */
export function nodeFetch(url: string, init: RequestInit = {}): Promise<Response> {
  return fetch(url, { ...init, headers: { ...(init.headers as Record<string, string>), connection: 'close' } });
}

/** How many peers a node's view of the cluster has (0 when it does not answer). */
async function peers(url: string): Promise<number> {
  try {
    const res = await nodeFetch(`${url}/cluster`);
    const body = (await res.json()) as { result?: { peers?: Record<string, unknown> } };
    return Object.keys(body.result?.peers ?? {}).length;
  } catch {
    return 0;
  }
}

/**
 * Waits until every replica of every shard of the collection is Active in the view of every running node
 * (`/collections/{name}/cluster`): after a node's restart, what it missed has been copied back to it. Every
 * node must agree: a node just restarted reports its own replicas Active from its storage before the
 * cluster has it recover them, while the nodes that stayed up still see them Dead or Partial.
 */
export async function waitForActiveReplicas(cluster: QdrantCluster, collection: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    const views = await Promise.all(
      cluster.nodes
        .filter((n) => n.running())
        .map(async (node) => {
          try {
            const res = await nodeFetch(`${node.url}/collections/${collection}/cluster`);
            return replicaStates(((await res.json()) as { result?: ShardsInfo }).result);
          } catch {
            return ['Unanswered'];
          }
        }),
    );
    last = JSON.stringify(views);
    if (views.every((states) => states.length > 0 && states.every((s) => s === 'Active'))) return;
    if (Date.now() > deadline)
      throw new Error(`replicas of ${collection} not all Active within ${timeoutMs} ms: ${last}`);
    await sleep(200);
  }
}

interface ShardsInfo {
  local_shards?: Array<{ state: string }>;
  remote_shards?: Array<{ state: string }>;
  shard_transfers?: unknown[];
}

function replicaStates(info: ShardsInfo | undefined): string[] {
  if (!info) return [];
  const states = [...(info.local_shards ?? []), ...(info.remote_shards ?? [])].map((s) => s.state);
  // A transfer still running means a replica is not yet complete whatever its state says.
  return (info.shard_transfers?.length ?? 0) > 0 ? [...states, 'Transferring'] : states;
}
