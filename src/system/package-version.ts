import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * pvai's own version, from its package.json: the nearest one above this module whose name is pvai's, the same
 * from `src/system` (tsx) and from `dist/src/system` (the build). `/z1/health` reports it beside the interface's.
 */
export function packageVersion(from: string = import.meta.dirname): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      const parsed = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version?: string };
      if (parsed.name === 'pvai' && parsed.version) return parsed.version;
    }
    if (dirname(dir) === dir) throw new Error(`pvai's package.json not found above ${from}`);
  }
}
