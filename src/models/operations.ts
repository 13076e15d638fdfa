import { AppError } from '../errors/index.js';
import { type Operations, requirePrincipal, type Schema } from '../http/index.js';
import { type Account, EMBEDDING_MODEL_ID, isModelId, MODEL_IDS, type ModelId } from '../kernel/index.js';
import type { TierPolicy } from '../tiers/index.js';
import { type EmbeddingLimits, embeddingModelResource, MODELS, modelResource, type RouteLimits } from './catalog.js';
import type { ModelServer } from './served-by.js';

type Model = Schema<'Model'>;

export interface CatalogSources {
  limitsOf(model: ModelId): RouteLimits;
  /** What serves each chat model now (served-by.ts). */
  servedBy(model: ModelId): ModelServer;
  /** The embedding model's limits and server; undefined without one (or when it could not say them now). */
  embedding(): Promise<{ limits: EmbeddingLimits; servedBy: ModelServer } | undefined>;
}

/**
 * The four PV models, each marked available or not for the caller's tier, with the context window and answer
 * budget of the route it takes (LlamaIndex and LangChain read them to size prompts), `vision` when it reads
 * images, and what serves it now; then PV-EMBED when the server has an embedding model; then each alias
 * (`modelAliases`) as an entry of its own, the model it stands for under the alias's id with `alias_of`: a client
 * that lists the models and picks an id can use any of them.
 */
export function modelCatalog(tiers: TierPolicy, sources: CatalogSources) {
  const chat = (id: ModelId, account: Account) =>
    modelResource(MODELS[id], tiers.allowsModel(account, id), sources.limitsOf(id), sources.servedBy(id));
  const embeddingResource = async (): Promise<Model | undefined> => {
    const found = await sources.embedding();
    return found ? embeddingModelResource(found.limits, found.servedBy) : undefined;
  };
  const aliasesOf = (models: readonly Model[]): Model[] =>
    tiers.names.aliases().flatMap(([alias, of]) => {
      const model = models.find((m) => m.id === of);
      return model ? [{ ...model, id: alias, alias_of: of }] : [];
    });
  return {
    /** Every model for the account's tier, then the aliases (`/z1/models`, and the dashboard's Models page). */
    async list(account: Account): Promise<Model[]> {
      const embedder = await embeddingResource();
      const models = [...MODEL_IDS.map((id) => chat(id, account)), ...(embedder ? [embedder] : [])];
      return [...models, ...aliasesOf(models)];
    },
    /** One model (or alias) by its id; undefined when there is none. */
    async get(account: Account, id: string): Promise<Model | undefined> {
      const alias = tiers.names.aliases().find(([name]) => name === id);
      const of = alias?.[1] ?? id;
      const model = isModelId(of)
        ? chat(of, account)
        : of === EMBEDDING_MODEL_ID
          ? await embeddingResource()
          : undefined;
      return model && alias ? { ...model, id, alias_of: alias[1] } : model;
    },
  };
}

export type ModelCatalog = ReturnType<typeof modelCatalog>;

/** `GET /z1/models` and `GET /z1/models/{model_id}`, over the catalogue. */
export function modelOperations(catalog: ModelCatalog): Operations<'listModels' | 'getModel'> {
  return {
    listModels: async (_request, call) => {
      const data = await catalog.list(requirePrincipal(call).account);
      return { status: 200, body: { object: 'list', data } };
    },
    getModel: async ({ params }, call) => {
      const model = await catalog.get(requirePrincipal(call).account, params.model_id);
      if (!model) throw new AppError('NOT_FOUND', `No model ${params.model_id}`, { model: params.model_id });
      return { status: 200, body: model };
    },
  };
}
