/** The four PV models of the interface: the one list every routing table, tier and catalogue is keyed by. */
export const MODEL_IDS = ['PV-TURBO', 'PV-STANDARD', 'PV-ADVANCED', 'PV-CODEX'] as const;
export type ModelId = (typeof MODEL_IDS)[number];

export function isModelId(value: string): value is ModelId {
  return (MODEL_IDS as readonly string[]).includes(value);
}

/**
 * The embedding model's id (`POST /z1/embeddings`, `/z1/models`): the service's one embedding model, whichever
 * engine serves it (all-MiniLM-L6-v2 locally, or an embedding upstream). Not a chat model: chat's `model` is
 * one of MODEL_IDS only.
 */
export const EMBEDDING_MODEL_ID = 'PV-EMBED';
