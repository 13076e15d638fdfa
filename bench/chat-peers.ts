/**
 * What bench:chat runs beside pvai: helper scripts and Portkey in their own processes, and the local engine
 * called directly for the tokens/s comparison.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { GeneralChatWrapper } from 'node-llama-cpp';
import { getSharedLlama } from '../src/providers/index.js';
import { freePort, median, ROOT, waitForHealthy } from './lib.js';

/** stories260K, the tiny real llama committed as a test fixture: a clone has it without ../shared. */
export const MODEL_PATH = join(ROOT, 'test', 'fixtures', 'models', 'stories260K.gguf');
export const LOCAL_ROUNDS = 9;

/** A bench helper script in its own process; it prints its URL as its first line. */
export async function startScript(
  script: string,
  args: string[] = [],
  nodeArgs: string[] = [],
  env: Record<string, string> = {},
): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', join(ROOT, 'bench', script), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = (await once(createInterface({ input: child.stdout as NodeJS.ReadableStream }), 'line')) as [string];
  return { url: line.trim(), child };
}

export async function startPortkey(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [join(ROOT, 'node_modules/@portkey-ai/gateway/build/start-server.js'), `--port=${port}`, '--headless'],
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const url = `http://127.0.0.1:${port}`;
  await waitForHealthy(url, child, '/');
  return { url, child };
}

export const stop = async (child: ChildProcess) => {
  if (child.exitCode === null) {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
};

export const chatBody = (model: string, extra: object = {}) =>
  JSON.stringify({ model, messages: [{ role: 'user', content: 'Say hello' }], max_tokens: 16, ...extra });

/**
 * Local-engine tokens/s, node-llama-cpp called directly (in this process) and through pvai (HTTP,
 * PV-CODEX → local), in alternating rounds so both see the same machine: one 400-token answer takes
 * a quarter of a second here, and a single pair of runs varies by ±15 %.
 */
export async function localTokensPerSecond(url: string, key: string, tokens: number) {
  const llama = await getSharedLlama();
  const model = await llama.loadModel({ modelPath: MODEL_PATH });
  const context = await model.createContext({ threads: 1, contextSize: 512 });
  const sequence = context.getSequence();
  const prompt = new GeneralChatWrapper()
    .generateContextState({
      chatHistory: [
        { type: 'user', text: 'Tell me a story' },
        { type: 'model', response: [] },
      ],
    })
    .contextText.tokenize(model.tokenizer);
  const direct: number[] = [];
  const through: number[] = [];
  for (let round = 0; round < LOCAL_ROUNDS; round++) {
    await sequence.clearHistory();
    let started = performance.now();
    let count = 0;
    for await (const token of sequence.evaluate(prompt, { temperature: 0.8, seed: round })) {
      if (model.isEogToken(token) || ++count >= tokens) break;
    }
    direct.push((count / (performance.now() - started)) * 1000);
    started = performance.now();
    const res = await fetch(`${url}/z1/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        model: 'PV-CODEX',
        user_id: 'bench',
        skip_cache: true,
        max_tokens: tokens,
        temperature: 0.8,
        seed: round,
        messages: [{ role: 'user', content: 'Tell me a story' }],
      }),
    });
    const body = (await res.json()) as { usage: { completion_tokens: number } };
    through.push((body.usage.completion_tokens / (performance.now() - started)) * 1000);
  }
  await context.dispose();
  await model.dispose();
  return { direct: median(direct), through: median(through) };
}
