import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

/** Where the dashboard tests save their screenshots (gitignored; CI keeps the folder as output). */
export const SCREENSHOTS = join(import.meta.dirname, '..', '..', 'test-output', 'screenshots');

/**
 * The Chromium the browser tests drive (Debian's `chromium`; PVAI_CHROMIUM overrides), or the reason
 * there is none. With CI=true a missing Chromium is a failure, not a skip (.ci/run installs it).
 */
export function findChromium(): { path: string } | { missing: string } {
  const given = process.env.PVAI_CHROMIUM;
  if (given) return existsSync(given) ? { path: given } : { missing: `PVAI_CHROMIUM=${given} does not exist` };
  for (const name of ['chromium', 'chromium-browser']) {
    try {
      const path = execFileSync('which', [name], { encoding: 'utf8' }).trim();
      if (path) return { path };
    } catch {
      // not on PATH
    }
  }
  const missing = 'Chromium is not installed (Debian: apt-get install chromium)';
  if (process.env.CI === 'true') throw new Error(`CI=true but ${missing}`);
  return { missing };
}

export function screenshotPath(name: string): string {
  mkdirSync(SCREENSHOTS, { recursive: true });
  return join(SCREENSHOTS, `${name}.png`);
}
