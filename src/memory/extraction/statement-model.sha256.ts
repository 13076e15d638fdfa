// Written by scripts/memory/train-statement-model.ts (npm run train:memory) with statement-model.json: do not edit.
export const STATEMENT_MODEL_SHA256 = 'b21a011eb62704ce9a1529d0f1c0e81159c6d3f5fd2b6a7af74d82b69e2911e4';
