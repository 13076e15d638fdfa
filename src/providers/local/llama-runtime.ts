import { getLlama, type Llama, LlamaLogLevel } from 'node-llama-cpp';

let sharedLlama: Promise<Llama> | undefined;

/**
 * The one llama.cpp runtime of the process (all local models share it).
 *
 * CPU only, prebuilt binary only: `build: 'never'` + `gpu: false` guarantee the library never tries
 * to compile llama.cpp or download a GPU build at request time — it either loads the shipped
 * `@node-llama-cpp/linux-x64` binary or fails fast.
 */
export function getSharedLlama(): Promise<Llama> {
  sharedLlama ??= getLlama({
    gpu: false,
    build: 'never',
    usePrebuiltBinaries: true,
    skipDownload: true,
    progressLogs: false,
    // Warnings are dropped in llama.cpp itself, not only in logLlamaMessage: with two runtimes in one process, the
    // addon's one logger slot belongs to whichever came last, and the other's release of it leaves llama.cpp
    // printing straight to stdout what passes this level.
    logLevel: LlamaLogLevel.error,
    logger: logLlamaMessage,
  }).catch((err: unknown) => {
    sharedLlama = undefined; // let a later request try again
    throw err;
  });
  return sharedLlama;
}

// llama.cpp warns about harmless metadata quirks on every load (e.g. "bad special token"); only
// real failures reach stderr.
function logLlamaMessage(level: LlamaLogLevel, message: string): void {
  if (level === LlamaLogLevel.error || level === LlamaLogLevel.fatal) process.stderr.write(`[llama] ${message}\n`);
}
