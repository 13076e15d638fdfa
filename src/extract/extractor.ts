import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { AppError } from '../errors/index.js';
import type { Extracted, FailureCode, Format } from './formats.js';

/** Limits for one file's extraction; a worker that exceeds them is terminated. */
export interface ExtractionLimits {
  timeoutMs: number;
  /** V8 heap of the worker (pdf.js and mammoth hold the whole file and its parse). */
  memoryMb: number;
  /** Files parsed at once; more wait their turn (each takes a core while it runs). */
  concurrency: number;
}

const DEFAULT_EXTRACTION_LIMITS: ExtractionLimits = { timeoutMs: 30_000, memoryMb: 512, concurrency: 2 };

// The worker imports formats.ts (or .js once built) by URL; it inherits tsx from execArgv under tests.
const FORMATS_MODULE = new URL(`./formats${extname(fileURLToPath(import.meta.url))}`, import.meta.url).href;

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
import(workerData.module)
  .then((m) => m.extract(workerData.data, workerData.format))
  .then((r) => parentPort.postMessage({ ok: true, result: r }))
  .catch((err) => parentPort.postMessage({
    ok: false,
    code: err && err.name === 'ExtractionFailure' ? err.code : 'DOCUMENT_UNREADABLE',
    message: err && err.name === 'ExtractionFailure' ? err.message : 'The file cannot be read: ' + (err && err.message),
  }));
`;

type Reply = { ok: true; result: Extracted } | { ok: false; code: FailureCode; message: string };

/**
 * Parses uploads off the event loop: one short-lived worker per file with a heap limit and a
 * deadline, so a hostile or huge file costs at most that worker, never the service. Failures become
 * 4xx AppErrors (413 for a decompression bomb or a file that outgrows the memory limit).
 */
export class Extractor {
  readonly #limits: ExtractionLimits;
  #running = 0;
  readonly #queue: Array<() => void> = [];

  constructor(limits: Partial<ExtractionLimits> = {}) {
    this.#limits = { ...DEFAULT_EXTRACTION_LIMITS, ...limits };
  }

  async extract(data: Uint8Array, format: Format): Promise<Extracted> {
    if (this.#running >= this.#limits.concurrency) await new Promise<void>((r) => this.#queue.push(r));
    this.#running++;
    try {
      return await this.#run(data, format);
    } finally {
      this.#running--;
      this.#queue.shift()?.();
    }
  }

  #run(data: Uint8Array, format: Format): Promise<Extracted> {
    const { timeoutMs, memoryMb } = this.#limits;
    return new Promise((resolve, reject) => {
      const worker = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: { module: FORMATS_MODULE, data, format },
        resourceLimits: { maxOldGenerationSizeMb: memoryMb, maxYoungGenerationSizeMb: 32 },
        stdout: true,
        stderr: true,
      });
      let settled = false;
      const finish = (fn: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        void worker.terminate();
        fn();
      };
      const timer = setTimeout(
        () =>
          finish(() =>
            reject(new AppError('DOCUMENT_UNREADABLE', `The file could not be parsed within ${timeoutMs / 1000} s`)),
          ),
        timeoutMs,
      );
      worker.once('message', (reply: Reply) =>
        finish(() => (reply.ok ? resolve(reply.result) : reject(new AppError(reply.code, reply.message)))),
      );
      worker.once('error', (err: Error & { code?: string }) =>
        finish(() =>
          reject(
            err.code === 'ERR_WORKER_OUT_OF_MEMORY'
              ? new AppError(
                  'PAYLOAD_TOO_LARGE',
                  `Parsing the file needed more than ${memoryMb} MB`,
                  null,
                  {},
                  { cause: err },
                )
              : new AppError(
                  'DOCUMENT_UNREADABLE',
                  `The file cannot be read: ${err.message}`,
                  null,
                  {},
                  { cause: err },
                ),
          ),
        ),
      );
      worker.once('exit', () =>
        finish(() => reject(new AppError('DOCUMENT_UNREADABLE', 'The file could not be parsed'))),
      );
    });
  }
}
