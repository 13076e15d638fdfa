import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type Dispatcher, EnvHttpProxyAgent, interceptors, request } from 'undici';

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
  /**
   * Keep what arrived when a download breaks off (in `<dest>.part`) and continue from there next time
   * with an HTTP Range request. Off by default: then a failed download leaves nothing behind.
   */
  resume?: boolean;
}

export interface DownloadedModel {
  path: string;
  bytes: number;
  sha256: string;
}

let redirectingAgent: Dispatcher | undefined;

/**
 * Model hubs answer with redirects to a CDN, so downloads follow up to 10 of them; HTTPS_PROXY,
 * HTTP_PROXY and NO_PROXY are honoured, as pip and curl honour them on the same machine.
 */
function downloadDispatcher(): Dispatcher {
  redirectingAgent ??= new EnvHttpProxyAgent().compose(interceptors.redirect({ maxRedirections: 10 }));
  return redirectingAgent;
}

class ChecksumMismatch extends Error {}

/** Bytes already in `path` (0 when absent), fed into `hash`. */
async function hashExisting(path: string, hash: ReturnType<typeof createHash>): Promise<number> {
  const size = await stat(path).then(
    (s) => s.size,
    () => 0,
  );
  if (size > 0) for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return size;
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
  const tempPath = options.resume
    ? `${destPath}.part`
    : join(dirname(destPath), `.${basename(destPath)}.${randomBytes(6).toString('hex')}.part`);
  const idleTimeoutMs = options.idleTimeoutMs ?? 60_000;
  try {
    const hash = createHash('sha256');
    let receivedBytes = options.resume ? await hashExisting(tempPath, hash) : 0;
    const headers = { ...options.headers, ...(receivedBytes > 0 ? { range: `bytes=${receivedBytes}-` } : {}) };
    const response = await request(url, {
      method: 'GET',
      dispatcher: downloadDispatcher(),
      headersTimeout: idleTimeoutMs,
      bodyTimeout: idleTimeoutMs,
      headers,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    // 206 from where the part file ends: continue it. Anything else (200: the server ignores ranges;
    // 416: the part is not a prefix of this file) starts over without it.
    const range = /^bytes (\d+)-\d+\/(\d+)$/.exec(String(response.headers['content-range'] ?? ''));
    const continuing = receivedBytes > 0 && response.statusCode === 206 && Number(range?.[1]) === receivedBytes;
    if (receivedBytes > 0 && !continuing) {
      await response.body.dump();
      await rm(tempPath, { force: true });
      return await downloadModel(url, destPath, options);
    }
    if (response.statusCode < 200 || response.statusCode >= 300) {
      await response.body.dump();
      throw new Error(`download failed: ${url} answered HTTP ${response.statusCode}`);
    }
    const lengthHeader = continuing ? Number(range?.[2]) : Number(response.headers['content-length']);
    const totalBytes = Number.isFinite(lengthHeader) && lengthHeader > 0 ? lengthHeader : null;
    options.onProgress?.({ receivedBytes, totalBytes });
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        hash.update(chunk);
        receivedBytes += chunk.length;
        options.onProgress?.({ receivedBytes, totalBytes });
        callback(null, chunk);
      },
    });
    await pipeline(
      response.body,
      meter,
      createWriteStream(tempPath, { flags: continuing ? 'a' : 'w' }),
      options.signal ? { signal: options.signal } : {},
    );
    if (totalBytes !== null && receivedBytes !== totalBytes) {
      throw new Error(`download truncated: got ${receivedBytes} of ${totalBytes} bytes`);
    }
    const sha256 = hash.digest('hex');
    if (options.sha256 !== undefined && options.sha256.toLowerCase() !== sha256) {
      throw new ChecksumMismatch(
        `checksum mismatch for ${url}: expected sha256 ${options.sha256.toLowerCase()}, got ${sha256}`,
      );
    }
    await rename(tempPath, destPath);
    return { path: destPath, bytes: receivedBytes, sha256 };
  } catch (err) {
    // A resumable part is kept unless its bytes are known to be wrong.
    if (!options.resume || err instanceof ChecksumMismatch) await rm(tempPath, { force: true });
    throw err;
  }
}
