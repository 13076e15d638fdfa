/**
 * npm run bench:upload — a 100 MiB file through `POST /z1/files` (a business account: per-file cap 512 MiB),
 * the body streamed from a generator in 1 MiB pieces over a raw http.request (multipart framing written by hand,
 * never a 100 MiB buffer), while the server's resident memory is sampled every 50 ms from
 * /proc/<pid>/status (`pvai serve` from dist/ runs in its own process, a fresh database).
 *
 * Measured: upload MB/s (1 MB = 10^6 bytes) to the 200 answer, the server's RSS growth over its resting RSS
 * (target < 50 MB), then the download `GET /z1/files/{id}/content` (MB/s, RSS growth, and the SHA-256 of
 * what comes back against what was sent). SQLite always; PostgreSQL too with DATABASE_URL.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { ADMIN_TOKEN, type BenchServer, freshStorage, startBenchServer, table } from './lib.js';

const MIB = 1024 * 1024;
/** 100 MiB, in 1 MiB pieces. */
export const PIECES = 100;
const SAMPLE_MS = 50;
/** Target: the server's RSS grows by less than this during the upload. */
export const RSS_LIMIT_MB = 50;

export interface UploadRssResult {
  backend: string;
  bytes: number;
  status: number;
  uploadSeconds: number;
  /** Server RSS at rest before the upload, MB (10^6 bytes). */
  restMb: number;
  /** Peak RSS during the upload minus the resting RSS, MB; and its anonymous part alone. */
  uploadGrowthMb: number;
  uploadAnonGrowthMb: number;
  downloadSeconds: number;
  downloadGrowthMb: number;
  identical: boolean;
  samples: number;
  /** The upload's RSS samples: ms since its start, MB over the resting RSS. */
  trace: Array<[number, number]>;
}

/** VmRSS and RssAnon of a process, bytes. */
function rssOf(pid: number): { rss: number; anon: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), anon: kb('RssAnon') };
}

/** Samples a process's RSS every 50 ms until stopped; answers the peaks. */
function sampler(pid: number) {
  let peak = { rss: 0, anon: 0 };
  let samples = 0;
  const started = performance.now();
  const trace: Array<[number, number]> = [];
  const take = () => {
    const now = rssOf(pid);
    peak = { rss: Math.max(peak.rss, now.rss), anon: Math.max(peak.anon, now.anon) };
    trace.push([Math.round(performance.now() - started), now.rss]);
    samples++;
  };
  take();
  const timer = setInterval(take, SAMPLE_MS);
  return {
    stop() {
      clearInterval(timer);
      take();
      return { ...peak, samples, trace };
    },
  };
}

/** The server's RSS at rest: the median of 20 samples 50 ms apart. */
async function restingRss(pid: number): Promise<{ rss: number; anon: number }> {
  const xs: Array<{ rss: number; anon: number }> = [];
  for (let i = 0; i < 20; i++) {
    xs.push(rssOf(pid));
    await new Promise((r) => setTimeout(r, SAMPLE_MS));
  }
  const mid = (k: 'rss' | 'anon') => xs.map((x) => x[k]).sort((a, b) => a - b)[10] ?? 0;
  return { rss: mid('rss'), anon: mid('anon') };
}

const WORDS = (
  'wing flutter boundary layer supersonic pressure distribution heat transfer shock wave laminar turbulent ' +
  'nozzle compressible viscous flow slender body cone cylinder plate reynolds number mach stagnation point ' +
  'aerodynamic heating panel buckling stress thermal theory experiment results measured approximate solution ' +
  'the of and in a to for at with on by is are was were an as from which this that these be it has'
)
  .split(' ')
  .map((w) => Buffer.from(`${w} `));

/** 16 KiB of English-like text: words from a seeded xorshift, a newline every ~80 bytes, ending in one. */
function textBlock(seed: number): Buffer {
  const size = 16 * 1024;
  const buf = Buffer.alloc(size, 0x20);
  let x = seed >>> 0 || 1;
  let at = 0;
  let line = 0;
  while (at < size - 1) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    const word = WORDS[x % WORDS.length] as Buffer;
    const n = Math.min(word.length, size - 1 - at);
    word.copy(buf, at, 0, n);
    at += n;
    line += n;
    if (line > 80) {
      buf[at - 1] = 0x0a;
      line = 0;
    }
  }
  buf[size - 1] = 0x0a;
  return buf;
}

/**
 * `pieces` fresh pieces of 1 MiB of plain text, each 64 blocks drawn (seeded) from 64 different 16 KiB blocks of
 * words: varied text at memcpy speed, so the generator is not what limits the upload on a 2-core machine.
 */
export function* textPieces(pieces: number, seed = 0x9e3779b9): Generator<Buffer> {
  const blocks = Array.from({ length: 64 }, (_, i) => textBlock(seed + i * 7919));
  let x = seed >>> 0 || 1;
  for (let p = 0; p < pieces; p++) {
    const buf = Buffer.allocUnsafe(MIB);
    for (let at = 0; at < MIB; at += 16 * 1024) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      x >>>= 0;
      (blocks[x % blocks.length] as Buffer).copy(buf, at);
    }
    yield buf;
  }
}

/** POST /z1/files with a multipart body written piece by piece from `pieces`, honouring backpressure. */
export function streamUpload(
  url: string,
  key: string,
  filename: string,
  pieces: Iterable<Buffer>,
  size: number,
  hash: ReturnType<typeof createHash>,
): Promise<{ status: number; body: string }> {
  const boundary = `----pvai-bench-${Date.now().toString(16)}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nassistants\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\n` +
      'Content-Type: text/plain\r\n\r\n',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/z1/files`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${key}`,
        'Content-Type': `multipart/form-data; boundary=${boundary}`,
        'Content-Length': head.length + size + tail.length,
      },
    });
    req.on('response', (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    const write = (chunk: Buffer) =>
      req.write(chunk) ? Promise.resolve() : new Promise<void>((r) => req.once('drain', () => r()));
    (async () => {
      await write(head);
      for (const piece of pieces) {
        hash.update(piece);
        await write(piece);
      }
      req.end(tail);
    })().catch(reject);
  });
}

/** GET /z1/files/{id}/content, streamed: its bytes' count and SHA-256. */
function streamDownload(url: string, key: string, id: string): Promise<{ status: number; bytes: number; sha: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(`${url}/z1/files/${id}/content`, { headers: { Authorization: `Bearer ${key}` } }, (res) => {
        const hash = createHash('sha256');
        let bytes = 0;
        res.on('data', (d: Buffer) => {
          hash.update(d);
          bytes += d.length;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, sha: hash.digest('hex') }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

async function businessKey(server: BenchServer): Promise<string> {
  const res = await fetch(`${server.url}/admin/accounts`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ email: 'bench-upload@example.com', tier: 'business', credits: 1_000_000 }),
  });
  const body = (await res.json()) as { api_key: string };
  if (res.status !== 201) throw new Error(`account: ${res.status} ${JSON.stringify(body)}`);
  return body.api_key;
}

export async function measureUploadRss(
  where: { postgresUrl?: string | undefined } = {},
  /** 1 MiB pieces to send, and extra environment for the server (a diagnosis's allocator settings). */
  options: { pieces?: number; env?: Record<string, string> } = {},
): Promise<UploadRssResult> {
  const storage = await freshStorage(where.postgresUrl);
  const server = await startBenchServer({ ...storage.env, ...options.env }, { tiers: { business: { rpm: 100_000 } } });
  try {
    const pid = server.child.pid;
    if (pid === undefined) throw new Error('no server pid');
    const key = await businessKey(server);
    // One small upload first, so code loaded on first use is not counted as the big upload's growth.
    const warm = await streamUpload(server.url, key, 'warm.txt', textPieces(1, 7), MIB, createHash('sha256'));
    if (warm.status !== 200) throw new Error(`warm-up upload: ${warm.status} ${warm.body.slice(0, 300)}`);
    const rest = await restingRss(pid);

    const pieces = options.pieces ?? PIECES;
    const size = pieces * MIB;
    const sent = createHash('sha256');
    const up = sampler(pid);
    const started = performance.now();
    const res = await streamUpload(server.url, key, 'bench-100mib.txt', textPieces(pieces), size, sent);
    const uploadSeconds = (performance.now() - started) / 1000;
    const upPeak = up.stop();
    if (res.status !== 200) throw new Error(`upload: ${res.status} ${res.body.slice(0, 300)}`);
    const file = JSON.parse(res.body) as { id: string; bytes: number };
    if (file.bytes !== size) throw new Error(`upload answered bytes ${file.bytes}, sent ${size}`);

    const restAfter = await restingRss(pid);
    const down = sampler(pid);
    const downStarted = performance.now();
    const got = await streamDownload(server.url, key, file.id);
    const downloadSeconds = (performance.now() - downStarted) / 1000;
    const downPeak = down.stop();
    if (got.status !== 200) throw new Error(`download: ${got.status}`);
    return {
      backend: where.postgresUrl ? 'PostgreSQL' : 'SQLite',
      bytes: size,
      status: res.status,
      uploadSeconds,
      restMb: rest.rss / 1e6,
      uploadGrowthMb: (upPeak.rss - rest.rss) / 1e6,
      uploadAnonGrowthMb: (upPeak.anon - rest.anon) / 1e6,
      downloadSeconds,
      downloadGrowthMb: (downPeak.rss - restAfter.rss) / 1e6,
      identical: got.bytes === size && got.sha === sent.digest('hex'),
      samples: upPeak.samples,
      trace: upPeak.trace.map(([ms, rss]) => [ms, Math.round((rss - rest.rss) / 1e5) / 10]),
    };
  } finally {
    await server.stop();
    await storage.drop();
  }
}

/** SQLite, then PostgreSQL with DATABASE_URL; a failure is a note. */
export async function uploadRssAll(log: (m: string) => void): Promise<{ rows: UploadRssResult[]; notes: string[] }> {
  const rows: UploadRssResult[] = [];
  const notes: string[] = [];
  const targets: Array<{ postgresUrl?: string }> = [{}];
  if (process.env.DATABASE_URL) targets.push({ postgresUrl: process.env.DATABASE_URL });
  for (const where of targets) {
    const label = where.postgresUrl ? 'PostgreSQL' : 'SQLite';
    try {
      rows.push(await measureUploadRss(where));
      log(`100 MiB upload ${label} done`);
    } catch (err) {
      notes.push(`100 MiB upload ${label} FAILED: ${(err as Error).message}`);
      log(notes.at(-1) ?? '');
    }
  }
  return { rows, notes };
}

export function uploadRssRows(rows: UploadRssResult[]): string[][] {
  return rows.flatMap((r) => [
    [
      `100 MiB upload, POST /z1/files, ${r.backend} (streamed in 1 MiB pieces; server at rest ${r.restMb.toFixed(0)} MB RSS)`,
      `${(r.bytes / 1e6 / r.uploadSeconds).toFixed(1)} MB/s (${r.uploadSeconds.toFixed(1)} s); server RSS +${r.uploadGrowthMb.toFixed(1)} MB at peak (anonymous +${r.uploadAnonGrowthMb.toFixed(1)} MB; ${r.samples} samples)`,
    ],
    [
      `its download, GET /z1/files/{id}/content, ${r.backend}`,
      `${(r.bytes / 1e6 / r.downloadSeconds).toFixed(1)} MB/s (${r.downloadSeconds.toFixed(1)} s); server RSS +${r.downloadGrowthMb.toFixed(1)} MB at peak; ${r.identical ? 'byte-identical' : 'NOT IDENTICAL'}`,
    ],
  ]);
}

export function uploadRssTargets(rows: UploadRssResult[]): Array<[string, string, string]> {
  return rows.map((r) => [
    `100 MiB upload ${r.backend}: server RSS growth < ${RSS_LIMIT_MB} MB, bytes back identical`,
    `+${r.uploadGrowthMb.toFixed(1)} MB, ${r.identical ? 'identical' : 'not identical'}`,
    r.uploadGrowthMb < RSS_LIMIT_MB && r.identical ? 'PASS' : 'FAIL',
  ]);
}

if (process.argv[1]?.endsWith('upload-rss.ts')) {
  const started = new Date();
  const { rows, notes } = await uploadRssAll((m) => process.stderr.write(`[bench:upload] ${m}\n`));
  console.log(`# bench:upload — ${started.toISOString()}\n`);
  console.log(table(['what', 'result'], uploadRssRows(rows)));
  console.log();
  console.log(table(['target', 'measured', ''], uploadRssTargets(rows)));
  for (const note of notes) console.log(`- ${note}`);
  if (notes.length > 0) process.exitCode = 1;
}
