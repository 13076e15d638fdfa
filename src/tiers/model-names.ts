import { AppError } from '../errors/index.js';
import { EMBEDDING_MODEL_ID, isModelId, MODEL_IDS, type ModelId } from '../kernel/index.js';

type AliasTarget = ModelId | typeof EMBEDDING_MODEL_ID;

/**
 * The names a request may give its model: the PV models' ids and the operator's aliases (`modelAliases`). Read where
 * a request enters (chat, responses, compaction, embeddings) so that everything after it (tier rules, a key's
 * allow-list, credits, routing, the cache, the answer's `model`) sees the PV model alone.
 */
export class ModelNames {
  readonly #aliases: ReadonlyMap<string, AliasTarget>;

  constructor(aliases: Readonly<Record<string, string>> = {}) {
    this.#aliases = new Map(
      Object.entries(aliases).filter((entry): entry is [string, AliasTarget] => isAliasTarget(entry[1])),
    );
  }

  /** Every alias and what it stands for, in the configuration's order. */
  aliases(): ReadonlyArray<readonly [string, AliasTarget]> {
    return [...this.#aliases];
  }

  /** The chat model a request names, or 400 INVALID_MODEL saying which names there are. */
  chat(name: string): ModelId {
    const model = this.#aliases.get(name) ?? name;
    if (isModelId(model)) return model;
    throw this.#unknown(name, model === EMBEDDING_MODEL_ID ? 'an embedding model' : undefined, [...MODEL_IDS]);
  }

  /** The embedding model a request names (PV-EMBED or an alias of it), or 400 INVALID_MODEL. */
  embedding(name: string): typeof EMBEDDING_MODEL_ID {
    const model = this.#aliases.get(name) ?? name;
    if (model === EMBEDDING_MODEL_ID) return model;
    throw this.#unknown(name, isModelId(model) ? 'a chat model' : undefined, [EMBEDDING_MODEL_ID]);
  }

  #unknown(name: string, isA: string | undefined, models: string[]): AppError {
    const names = [...models, ...this.aliases().flatMap(([alias, to]) => (models.includes(to) ? [alias] : []))];
    const what = isA ? `${name} is ${isA}` : `No model ${name}`;
    return new AppError(
      'INVALID_MODEL',
      `${what}: use one of ${names.join(', ')} (an operator may add names with modelAliases, see GET /z1/models)`,
      { field: 'model', model: name, allowed: names },
    );
  }
}

function isAliasTarget(value: string): value is AliasTarget {
  return isModelId(value) || value === EMBEDDING_MODEL_ID;
}
