import { copyFile, mkdir, rename, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { downloadPath, locateLocalModel, modelsDir } from '../chat/index.js';
import type { Config } from '../config/index.js';
import { AppError } from '../errors/index.js';
import { createProgressPrinter, downloadModel } from '../providers/index.js';
import { sha256File } from './fetch-wheel.js';
import { huggingFaceFile } from './hf.js';

export interface PulledModel {
  path: string;
  bytes: number;
  sha256: string;
  /** Set when the service would load another model than this one, saying how to choose this one. */
  note?: string;
}

/**
 * `pvai models pull URL|PATH|hf:… [--sha256 HEX]`: puts a GGUF into <dataDir>/models, where the service
 * finds it when PVAI_LOCAL_MODEL is unset. Downloads show a progress bar, continue where an interrupted
 * one stopped, and are checked against the checksum before they replace anything.
 */
export async function pullModel(
  source: string,
  config: Pick<Config, 'dataDir' | 'localModel'>,
  sha256?: string,
): Promise<PulledModel> {
  if (sha256 !== undefined && !/^[0-9a-fA-F]{64}$/.test(sha256)) {
    throw new AppError(
      'INVALID_PARAMETER',
      `--sha256 takes the file's SHA-256 as 64 hexadecimal characters (\`sha256sum FILE\` prints it), not ${JSON.stringify(sha256)}`,
      { field: 'sha256' },
    );
  }
  const hf = huggingFaceFile(source);
  const url = hf?.url ?? (/^https?:\/\//.test(source) ? source : undefined);
  let pulled: PulledModel;
  if (url) {
    const dest = hf ? join(modelsDir(config), hf.fileName) : downloadPath(config, source);
    const printer = createProgressPrinter();
    try {
      pulled = await downloadModel(url, dest, {
        resume: true,
        ...(sha256 ? { sha256 } : {}),
        ...(hf ? { headers: hf.headers } : {}),
        onProgress: (p) => printer.update(p),
      });
    } finally {
      printer.done();
    }
  } else {
    const digest = await sha256File(source);
    if (sha256 && digest !== sha256.toLowerCase()) {
      throw new AppError(
        'INVALID_PARAMETER',
        `checksum mismatch for ${source}: expected ${sha256}, got ${digest} (check the file, or the --sha256 given)`,
        { field: 'sha256' },
      );
    }
    await mkdir(modelsDir(config), { recursive: true });
    const path = join(modelsDir(config), basename(source));
    if (resolve(source) !== path) {
      await copyFile(source, `${path}.part`);
      await rename(`${path}.part`, path);
    }
    pulled = { path, bytes: (await stat(path)).size, sha256: digest };
  }
  const used = locateLocalModel(config).path;
  if (used && used !== pulled.path) {
    pulled.note = `the service loads ${used} (${config.localModel ? 'PVAI_LOCAL_MODEL' : 'the first *.gguf in the models directory'}); set PVAI_LOCAL_MODEL=${pulled.path} to use this one`;
  }
  return pulled;
}
