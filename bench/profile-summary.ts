/**
 * A V8 CPU profile summed by folder, two ways:
 * - self: where the CPU was (a product folder `src/<capability>`, a package, Node's own modules, GC, native);
 * - charged: each sample given to the innermost product folder on its stack — the capability that asked for
 *   the work, so a SQLite statement the limiter runs counts for `src/limits`, not for `node:sqlite`.
 * Idle samples are left out; shares are of the busy samples, µs per request when the request count is known.
 */
import { readFileSync } from 'node:fs';
import { table } from './lib.js';

interface CallFrame {
  functionName: string;
  url: string;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The `top` largest entries as table rows: folder, share of `total`, and `perRequest` of the amount. */
function ranked(
  amounts: Map<string, number>,
  total: number,
  top: number,
  perRequest: (amount: number) => string | number,
): Array<Array<string | number>> {
  return [...amounts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([folder, amount]) => [folder, `${((amount / total) * 100).toFixed(1)} %`, perRequest(amount)]);
}

/**
 * Node's native writes to a socket, by the form of what is written: a Buffer list (`writev`), one Buffer, or
 * a string. Koa joins a string body to the head and writes one string; a Buffer body (pvai's JSON answers)
 * goes out with the head in one `writev`. The kernel's work is the same, so the floor and pvai are compared
 * on all of them together: apart, the floor's ~28 µs a request under `writeUtf8String` and pvai's under
 * `writev` read as ~28 µs "beyond the floor" that was not (bench:chat, 2026-11-27).
 */
const SOCKET_WRITES = new Set([
  'writev',
  'writeBuffer',
  'writeUtf8String',
  'writeLatin1String',
  'writeAsciiString',
  'writeUcs2String',
]);
export const SOCKET_WRITE_FRAME = '(native) socket writes';

/** A native frame (no script) that is one of Node's socket writes: named SOCKET_WRITE_FRAME in both rankings. */
const isSocketWrite = (frame: CallFrame) => !frame.url && SOCKET_WRITES.has(frame.functionName);

/** The folder a frame belongs to. */
export function folderOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (isSocketWrite(frame)) return SOCKET_WRITE_FRAME;
  if (!url) return functionName.startsWith('(') ? functionName : `(native) ${functionName}`;
  const product = /\/(?:dist\/)?(src|scripts|bench)\/([^/]+)\//.exec(url);
  if (product && !url.includes('/node_modules/')) return `${product[1]}/${product[2]}`;
  if (/\/(?:dist\/)?src\/[^/]+\.js$/.test(url)) return 'src (root)';
  if (/\/bench\/[^/]+\.[cm]?[jt]s$/.test(url) && !url.includes('/node_modules/')) return 'bench';
  const pkg = /.*\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg) return pkg[1] ?? url;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  return url;
}

export function summariseProfile(path: string, requests?: number): string {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const chargedTo = new Map<number, string>();
  const charge = (id: number): string => {
    const known = chargedTo.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id);
    const folder = node ? folderOf(node.callFrame) : '(unknown)';
    const up = parent.get(id);
    // A stack with no product frame is charged to none (then reported by its own innermost folder).
    const result = folder.startsWith('src') ? folder : up === undefined ? '(none)' : charge(up);
    chargedTo.set(id, result);
    return result;
  };
  const self = new Map<string, number>();
  const charged = new Map<string, number>();
  let busy = 0;
  for (const [i, id] of profile.samples.entries()) {
    const node = byId.get(id);
    // Idle, and the profiler's own work in the process (node:inspector), are not the server's.
    if (!node || node.callFrame.functionName === '(idle)' || node.callFrame.url === 'node:inspector') continue;
    const micros = profile.timeDeltas[i] ?? 0;
    busy += micros;
    const folder = folderOf(node.callFrame);
    self.set(folder, (self.get(folder) ?? 0) + micros);
    const owner = charge(id);
    const key = owner.startsWith('src') ? owner : `${folder} (no product frame)`;
    charged.set(key, (charged.get(key) ?? 0) + micros);
  }
  const rows = (m: Map<string, number>) =>
    ranked(m, busy, 24, (micros) => (requests ? (micros / requests).toFixed(1) : '-'));
  return [
    `CPU profile ${path}: ${(busy / 1000).toFixed(0)} ms busy`,
    '',
    'Self time by folder',
    table(['folder', 'share', 'µs/request'], rows(self)),
    '',
    'Charged to the innermost product folder on the stack',
    table(['folder', 'share', 'µs/request'], rows(charged)),
  ].join('\n');
}

/**
 * A frame's name that reads the same in the floor (run from TypeScript through tsx) and in pvai (run from
 * dist/): the function and its file without `dist/`, extension or line, so `readText` of src/http/body is one
 * row for both.
 */
export function frameKey(frame: CallFrame): string {
  if (isSocketWrite(frame)) return SOCKET_WRITE_FRAME;
  const url = frame.url.replace(/^file:\/\//, '');
  const file = (
    url.includes('/node_modules/')
      ? url.replace(/.*\/node_modules\//, '')
      : url.replace(/^.*?\/(?:dist\/)?(src|scripts|bench)\//, '$1/')
  ).replace(/\.(?:js|ts|mjs)$/, '');
  return `${frame.functionName || '(anonymous)'}${file ? ` ${file}` : ''}`;
}

/** Self time per `key` of a profile's busy samples, in µs per request. */
function selfTimes(path: string, requests: number, key: (frame: CallFrame) => string): Map<string, number> {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const out = new Map<string, number>();
  for (const [i, id] of profile.samples.entries()) {
    const node = byId.get(id);
    if (!node || node.callFrame.functionName === '(idle)' || node.callFrame.url === 'node:inspector') continue;
    const k = key(node.callFrame);
    out.set(k, (out.get(k) ?? 0) + (profile.timeDeltas[i] ?? 0) / requests);
  }
  return out;
}

/**
 * Where the subject's CPU goes beyond the floor's, per request: the self time of each function (and of each
 * folder) in both profiles, ranked by the difference. What the floor spends too (Koa, openapi-backend, the
 * socket writes) cancels out, and what is left is the product's own cost, wherever it lands — including the
 * garbage collector's share and Node's own work done for the product (its header writes, its timers).
 */
export function diffProfiles(
  floor: { path: string; requests: number },
  subject: { path: string; requests: number },
  top = 30,
): string {
  const section = (title: string, key: (frame: CallFrame) => string) => {
    const a = selfTimes(floor.path, floor.requests, key);
    const b = selfTimes(subject.path, subject.requests, key);
    const sum = (m: Map<string, number>) => [...m.values()].reduce((x, y) => x + y, 0);
    const rows = [...new Set([...a.keys(), ...b.keys()])]
      .map((k) => ({ k, a: a.get(k) ?? 0, b: b.get(k) ?? 0 }))
      .sort((x, y) => y.b - y.a - (x.b - x.a))
      .slice(0, top)
      .map(({ k, a: fa, b: fb }) => [k, fa.toFixed(1), fb.toFixed(1), (fb - fa).toFixed(1)]);
    return [
      `${title} (busy µs per request: the floor ${sum(a).toFixed(0)}, pvai ${sum(b).toFixed(0)})`,
      table(['frame', 'floor µs', 'pvai µs', 'beyond µs'], rows),
    ].join('\n');
  };
  return [
    section('Beyond the floor by folder', folderOf),
    '',
    section('Beyond the floor by function (self time)', frameKey),
  ].join('\n');
}

interface HeapNode {
  callFrame: CallFrame;
  selfSize: number;
  children: HeapNode[];
}

/** A sampling heap profile (garbage included) summed the same two ways, in KB per request. */
export function summariseHeapProfile(path: string, requests: number): string {
  const { head } = JSON.parse(readFileSync(path, 'utf8')) as { head: HeapNode };
  const self = new Map<string, number>();
  const charged = new Map<string, number>();
  let total = 0;
  const walk = (node: HeapNode, owner: string | undefined) => {
    const folder = folderOf(node.callFrame);
    const product = folder.startsWith('src') ? folder : owner;
    if (node.selfSize > 0) {
      total += node.selfSize;
      self.set(folder, (self.get(folder) ?? 0) + node.selfSize);
      const key = product ?? `${folder} (no product frame)`;
      charged.set(key, (charged.get(key) ?? 0) + node.selfSize);
    }
    for (const child of node.children) walk(child, product);
  };
  walk(head, undefined);
  const rows = (m: Map<string, number>) => ranked(m, total, 20, (bytes) => bytes / requests / 1024);
  return [
    `Heap allocation profile ${path} (sampled, garbage included): ${(total / requests / 1024).toFixed(1)} KB/request`,
    '',
    'Allocated by folder',
    table(['folder', 'share', 'KB/request'], rows(self)),
    '',
    'Charged to the innermost product folder on the stack',
    table(['folder', 'share', 'KB/request'], rows(charged)),
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [path, requests, subject, subjectRequests] = process.argv.slice(2);
  if (!path)
    throw new Error(
      'usage: tsx bench/profile-summary.ts <file.cpuprofile|.heapprofile> [requests] ' +
        '[<subject.cpuprofile> <requests>: ranked by what the subject spends beyond the first]',
    );
  if (subject)
    console.log(
      diffProfiles(
        { path, requests: Number(requests ?? 1) },
        { path: subject, requests: Number(subjectRequests ?? 1) },
      ),
    );
  else if (path.endsWith('.heapprofile')) console.log(summariseHeapProfile(path, Number(requests ?? 1)));
  else console.log(summariseProfile(path, requests ? Number(requests) : undefined));
}
