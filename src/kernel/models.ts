/** The four PV models of the interface: the one list every routing table, tier and catalogue is keyed by. */
export const MODEL_IDS = ['PV-TURBO', 'PV-STANDARD', 'PV-ADVANCED', 'PV-CODEX'] as const;
export type ModelId = (typeof MODEL_IDS)[number];

export function isModelId(value: string): value is ModelId {
  return (MODEL_IDS as readonly string[]).includes(value);
}
