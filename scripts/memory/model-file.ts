/**
 * Writes the statement model where the service reads it: the weights as JSON
 * (src/memory/extraction/statement-model.json, one line per bias, scale and base64 row of int8 weights, so a
 * retraining's diff says which rows moved) and their SHA-256 beside the loader (statement-model.sha256.ts),
 * which checks it at load.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface StoredModel {
  turns: number;
  heads: Record<string, unknown>;
}

export function writeStatementModel(root: string, model: StoredModel): { path: string; sha256: string } {
  const dir = join(root, 'src', 'memory', 'extraction');
  const path = join(dir, 'statement-model.json');
  const json = `${JSON.stringify(model, null, 2)}\n`;
  const sha256 = createHash('sha256').update(json).digest('hex');
  writeFileSync(path, json);
  writeFileSync(
    join(dir, 'statement-model.sha256.ts'),
    '// Written by scripts/memory/train-statement-model.ts (npm run train:memory) with statement-model.json: do not edit.\n' +
      `export const STATEMENT_MODEL_SHA256 = '${sha256}';\n`,
  );
  return { path, sha256 };
}
