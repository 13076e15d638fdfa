/**
 * npm run bench:ab -- <before> [<after>] — two builds of pvai side by side on the chat miss path, loaded in
 * alternating windows, and the after/before throughput ratio with how sure it is.
 *
 * `<before>` and `<after>` are each a git ref (built into a temporary worktree that borrows this tree's
 * node_modules, so a ref with other dependencies is not comparable) or a directory holding a build (its
 * `src/cli/pvai.js`); `<after>` defaults to this tree, built as bench:chat builds it.
 *
 * Why alternating windows of two servers that both stay up: on this 2-vCPU VM one build's throughput moves by
 * ±10 % from one minute to the next, so two builds run one after the other differ by that much with the same
 * code. Here each round loads one server for WINDOW_S seconds, then the other (the order flips every round),
 * after a quiet gap in which the idle one finishes its writes behind (a generation is 2 s). The paired ratio
 * of a round has both sides under nearly the same machine; the report gives the median of the rounds' ratios
 * and a bootstrap 95 % interval of that median. An interval that holds 1 resolves no difference. Run a build
 * against itself to see the spread: on this machine such runs gave 0.962 (0.934–1.043) and 1.058 (0.993–1.115),
 * so the tool resolves about ±7 %, not 2 %.
 *
 * The load is bench:chat's miss row: 32 connections, 1,000 accounts, PV-TURBO against the mock upstream,
 * `skip_cache`, every capability on (`BENCH_AB_HITS=1`: the cache-hit load); no local model is loaded. Server CPU per request comes from /proc
 * (Linux), counted over the window only: what a build writes behind after its window is not in it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chatBody, startScript, stop } from './chat-peers.js';
import {
  type BenchServer,
  createBenchAccount,
  freshStorage,
  load,
  median,
  ROOT,
  startBenchServer,
  table,
} from './lib.js';

const ROUNDS = Number(process.env.AB_ROUNDS ?? 12);
const WINDOW_S = Number(process.env.AB_WINDOW_S ?? 4);
const QUIET_MS = Number(process.env.AB_QUIET_MS ?? 4000);
/**
 * Seconds of load before each measured window, not counted. For changes to what is written behind: with the
 * default 0, a window holds a build's requests and not all of their writes behind (they land in the quiet gap);
 * a warm-up at least as long as a generation puts the window in the steady state where they are written beside
 * the requests, as under sustained load (AB_WARMUP_S=8 AB_WINDOW_S=12 for a generation of up to 8 s).
 */
const WARMUP_S = Number(process.env.AB_WARMUP_S ?? 0);
const ACCOUNTS = 1000;
const CONNECTIONS = 32;

interface Build {
  label: string;
  /** The CLI entry point; undefined: this tree's build. */
  entry: string | undefined;
  cleanup(): void;
}

/** A build directory as given, or a git ref built into a temporary worktree. */
function buildOf(spec: string): Build {
  const dir = resolve(spec);
  if (existsSync(join(dir, 'src/cli/pvai.js'))) {
    return { label: spec, entry: join(dir, 'src/cli/pvai.js'), cleanup: () => undefined };
  }
  const commit = execFileSync('git', ['rev-parse', '--short', spec], { cwd: ROOT, encoding: 'utf8' }).trim();
  const tree = mkdtempSync(join(tmpdir(), `pvai-ab-${commit}-`));
  execFileSync('git', ['worktree', 'add', '--detach', tree, commit], { cwd: ROOT, stdio: 'ignore' });
  const cleanup = () => {
    execFileSync('git', ['worktree', 'remove', '--force', tree], { cwd: ROOT, stdio: 'ignore' });
    rmSync(tree, { recursive: true, force: true });
  };
  try {
    symlinkSync(join(ROOT, 'node_modules'), join(tree, 'node_modules'), 'dir');
    execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
      cwd: tree,
      stdio: 'inherit',
    });
  } catch (err) {
    cleanup();
    throw err;
  }
  return { label: `${spec} (${commit})`, entry: join(tree, 'dist/src/cli/pvai.js'), cleanup };
}

/** User plus system CPU of a process so far, in µs (Linux; NaN elsewhere). */
function cpuMicros(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return Number.NaN;
  }
}

/** The bootstrap 95 % interval of the median of `xs` (a fixed seed, so a report can be run again). */
function medianInterval(xs: number[]): [number, number] {
  let seed = 0x2545f491;
  const random = () => {
    seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
    return seed / 2 ** 32;
  };
  const medians = Array.from({ length: 2000 }, () =>
    median(Array.from(xs, () => xs[Math.floor(random() * xs.length)] as number)),
  ).sort((a, b) => a - b);
  return [medians[50] ?? Number.NaN, medians[1949] ?? Number.NaN];
}

interface Arm {
  build: Build;
  server: BenchServer;
  requests: Array<{ method: 'POST'; path: string; headers: Record<string, string>; body: string }>;
  rps: number[];
  cpu: number[];
}

const [beforeSpec, afterSpec] = process.argv.slice(2);
if (!beforeSpec) throw new Error('usage: npm run bench:ab -- <before: git ref or build dir> [<after>]');
const builds = [
  buildOf(beforeSpec),
  afterSpec ? buildOf(afterSpec) : { label: 'this tree', entry: undefined, cleanup() {} },
];
const mock = await startScript('mock-upstream-server.ts');
const storages: Array<Awaited<ReturnType<typeof freshStorage>>> = [];
const servers: BenchServer[] = [];
const arms: Arm[] = [];
try {
  const upstream = { provider: 'openai-compatible', baseUrl: mock.url, model: 'mock-model', maxRetries: 0 };
  const config = {
    tiers: { enterprise: { rpm: 1_000_000, rpd: 100_000_000, monthly: 1_000_000_000 } },
    routing: { 'PV-TURBO': [upstream] },
  };
  // BENCH_AB_HITS=1: the cache-hit load instead (each account's first request fills the cache, the rest are hits).
  const hits = process.env.BENCH_AB_HITS === '1';
  const body = chatBody('PV-TURBO', hits ? { user_id: 'bench' } : { user_id: 'bench', skip_cache: true });
  // Both set up at once: set up one after the other, the server that waited idle through the other's set-up
  // came out ~6 % ahead in two runs of identical builds (cause not pinned down).
  const setUp = async (build: Build): Promise<Arm> => {
    const storage = await freshStorage();
    storages.push(storage);
    const server = await startBenchServer(storage.env, config, [], build.entry);
    servers.push(server);
    const requests = [];
    for (let i = 0; i < ACCOUNTS; i++) {
      const key = await createBenchAccount(server.url, `ab${i}@example.com`);
      const headers = { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` };
      // Each account once, as bench:chat does: its key resolved and its balance loaded before any window.
      await (await fetch(`${server.url}/z1/chat/completions`, { method: 'POST', headers, body })).arrayBuffer();
      requests.push({ method: 'POST' as const, path: '/z1/chat/completions', headers, body });
    }
    return { build, server, requests, rps: [], cpu: [] };
  };
  arms.push(...(await Promise.all(builds.map(setUp))));
  const loadArm = (arm: Arm, seconds: number) =>
    load({ url: arm.server.url, method: 'POST', requests: arm.requests, connections: CONNECTIONS, seconds });
  for (const arm of arms) await loadArm(arm, 3);
  for (let round = 0; round < ROUNDS; round++) {
    for (const arm of round % 2 === 0 ? arms : [...arms].reverse()) {
      await new Promise((done) => setTimeout(done, QUIET_MS));
      if (WARMUP_S > 0) await loadArm(arm, WARMUP_S);
      const before = cpuMicros(arm.server.child.pid);
      const result = await loadArm(arm, WINDOW_S);
      arm.rps.push(result.rps);
      arm.cpu.push((cpuMicros(arm.server.child.pid) - before) / result.requests);
    }
  }
  const [a, b] = arms as [Arm, Arm];
  const ratios = a.rps.map((rps, i) => (b.rps[i] ?? Number.NaN) / rps);
  const [low, high] = medianInterval(ratios);
  const verdict = low > 1 ? 'after is faster' : high < 1 ? 'after is slower' : 'no difference resolved';
  console.log(
    `\npvai bench:ab — chat ${hits ? 'cache hits' : 'misses'}, ${CONNECTIONS} connections, ${ACCOUNTS} accounts, ${ROUNDS} rounds of ` +
      `${WINDOW_S} s windows${WARMUP_S > 0 ? ` (each after ${WARMUP_S} s of load)` : ''}, alternating\n`,
  );
  console.log(
    table(
      ['build', 'req/s, median', 'server CPU µs/req, median', 'req/s by round'],
      arms.map((arm, i) => [
        `${i === 0 ? 'before' : 'after'}: ${arm.build.label}`,
        Math.round(median(arm.rps)),
        median(arm.cpu).toFixed(1),
        arm.rps.map((r) => Math.round(r)).join(' '),
      ]),
    ),
  );
  console.log(
    `\nafter/before req/s, median of the rounds' ratios: ${median(ratios).toFixed(3)} ` +
      `(bootstrap 95 % interval ${low.toFixed(3)}–${high.toFixed(3)}): ${verdict}`,
  );
} finally {
  for (const server of servers) await server.stop();
  await stop(mock.child);
  for (const storage of storages) await storage.drop();
  for (const build of builds) build.cleanup();
}
process.exit(0);
