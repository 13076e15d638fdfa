import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { defaultChatModelPath, embeddingModelPath, toolPaths } from '../../src/setup/index.js';
import { ROOT } from './processes.js';

/**
 * The data directory scripts/setup filled: PVAI_DATA_DIR as it is for the set-up, else the default
 * `./data` of the checkout. Tests read the default models from there and never download anything.
 */
const setupDataDir = process.env.PVAI_DATA_DIR || join(ROOT, 'data');

/** SmolLM2-135M-Instruct, the default chat model, where scripts/setup put it: for tests that check what an answer says. */
export const SMOLLM2_MODEL = defaultChatModelPath({ dataDir: setupDataDir });
/**
 * all-MiniLM-L6-v2 where scripts/setup converted it (checked against the reference's pinned SHA-256): the
 * service's own lookup, so PVAI_EMBEDDING_MODEL, when set, names where the set-up put it.
 */
export const EMBEDDING_MODEL = embeddingModelPath({
  dataDir: setupDataDir,
  embeddingModel: process.env.PVAI_EMBEDDING_MODEL || undefined,
});
/**
 * stories260K, the tiny real llama committed as a test fixture (test/fixtures/models/README.md): the
 * local engine's own tests, and every test server that needs a chat model but not a good answer.
 */
export const TINY_CHAT_MODEL = join(ROOT, 'test', 'fixtures', 'models', 'stories260K.gguf');
export const SETUP_TOOLS = toolPaths(ROOT);

/**
 * A skip reason when something scripts/setup provides is missing here, or false. In CI (CI=true) it is
 * never a skip: the set-up ran there, so a missing piece must fail the test (see `requireSetUp`).
 */
export function setUpSkip(paths: readonly string[]): string | false {
  if (process.env.CI === 'true') return false;
  const missing = paths.filter((p) => !existsSync(p));
  return missing.length ? `not set up here (${missing.join(', ')} missing): run scripts/setup` : false;
}

/** Fails (in CI, where nothing skips) with the command to run when a set-up piece is missing. */
export function requireSetUp(paths: readonly string[]): void {
  for (const path of paths) assert.ok(existsSync(path), `${path} is missing: run scripts/setup`);
}
