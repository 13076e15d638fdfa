import { createHash } from 'node:crypto';
import { copyFile, mkdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { downloadPath, modelsDir } from '../chat/index.js';
import { loadConfig } from '../config/index.js';
import { createProgressPrinter, downloadModel } from '../providers/index.js';

/**
 * `pvai models pull URL_OR_PATH [--sha256 HEX]`: puts a GGUF into <dataDir>/models, where the
 * service finds it when PVAI_LOCAL_MODEL is unset. URLs stream to a temp file with a progress bar
 * and are checked against the checksum before they replace anything.
 */
export async function pullModel(
  source: string,
  sha256?: string,
): Promise<{ path: string; bytes: number; sha256: string }> {
  const config = loadConfig();
  if (/^https?:\/\//.test(source)) {
    const printer = createProgressPrinter();
    try {
      return await downloadModel(source, downloadPath(config, source), {
        ...(sha256 ? { sha256 } : {}),
        onProgress: (p) => printer.update(p),
      });
    } finally {
      printer.done();
    }
  }
  const content = await readFile(source);
  const digest = createHash('sha256').update(content).digest('hex');
  if (sha256 && digest !== sha256.toLowerCase()) {
    throw new Error(`checksum mismatch for ${source}: expected ${sha256}, got ${digest}`);
  }
  await mkdir(modelsDir(config), { recursive: true });
  const path = join(modelsDir(config), basename(source));
  await copyFile(source, path);
  return { path, bytes: content.length, sha256: digest };
}
