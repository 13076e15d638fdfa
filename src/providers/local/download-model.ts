import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Agent, type Dispatcher, interceptors, request } from 'undici';

export interface DownloadProgress {
  receivedBytes: number;
  /** From Content-Length; null when the server does not say. */
  totalBytes: number | null;
}

export interface DownloadModelOptions {
  /** Expected SHA-256 (hex). When given, a mismatch deletes the download and throws. */
  sha256?: string;
  onProgress?: (progress: DownloadProgress) => void;
  signal?: AbortSignal;
  /** E.g. an Authorization header for gated models. */
  headers?: Record<string, string>;
  /** Longest silence allowed between bytes. Default 60 s. */
  idleTimeoutMs?: number;
}

export interface DownloadedModel {
  path: string;
  bytes: number;
  sha256: string;
}

let redirectingAgent: Dispatcher | undefined;

/** Model hubs answer with redirects to a CDN, so downloads follow up to 10 of them. */
function downloadDispatcher(): Dispatcher {
  redirectingAgent ??= new Agent().compose(interceptors.redirect({ maxRedirections: 10 }));
  return redirectingAgent;
}

/**
 * Downloads `url` to `destPath` without ever leaving a partial file there: bytes stream into a
 * temporary file next to the destination (same filesystem), are hashed on the way, and the file is
 * renamed into place only when complete and (if `sha256` is given) verified.
 */
export async function downloadModel(
  url: string,
  destPath: string,
  options: DownloadModelOptions = {},
): Promise<DownloadedModel> {
  await mkdir(dirname(destPath), { recursive: true });
  const tempPath = join(dirname(destPath), `.${basename(destPath)}.${randomBytes(6).toString('hex')}.part`);
  const idleTimeoutMs = options.idleTimeoutMs ?? 60_000;
  try {
    const response = await request(url, {
      method: 'GET',
      dispatcher: downloadDispatcher(),
      headersTimeout: idleTimeoutMs,
      bodyTimeout: idleTimeoutMs,
      ...(options.headers ? { headers: options.headers } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (response.statusCode < 200 || response.statusCode >= 300) {
      await response.body.dump();
      throw new Error(`download failed: ${url} answered HTTP ${response.statusCode}`);
    }
    const lengthHeader = Number(response.headers['content-length']);
    const totalBytes = Number.isFinite(lengthHeader) && lengthHeader > 0 ? lengthHeader : null;
    const hash = createHash('sha256');
    let receivedBytes = 0;
    options.onProgress?.({ receivedBytes, totalBytes });
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        hash.update(chunk);
        receivedBytes += chunk.length;
        options.onProgress?.({ receivedBytes, totalBytes });
        callback(null, chunk);
      },
    });
    await pipeline(response.body, meter, createWriteStream(tempPath), options.signal ? { signal: options.signal } : {});
    if (totalBytes !== null && receivedBytes !== totalBytes) {
      throw new Error(`download truncated: got ${receivedBytes} of ${totalBytes} bytes`);
    }
    const sha256 = hash.digest('hex');
    if (options.sha256 !== undefined && options.sha256.toLowerCase() !== sha256) {
      throw new Error(`checksum mismatch for ${url}: expected sha256 ${options.sha256.toLowerCase()}, got ${sha256}`);
    }
    await rename(tempPath, destPath);
    return { path: destPath, bytes: receivedBytes, sha256 };
  } catch (err) {
    await rm(tempPath, { force: true });
    throw err;
  }
}
