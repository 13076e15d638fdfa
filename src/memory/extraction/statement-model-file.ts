import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { StoredHead } from './statement-model.js';
import { STATEMENT_MODEL_SHA256 } from './statement-model.sha256.js';

/** What `npm run train:memory` writes to `statement-model.json`: the statement model's two heads. */
interface StoredStatementModel {
  turns: number;
  heads: {
    /** Over the statement's embedding by the embedder it names and its word features: the default. */
    embeddingAndWords: StoredHead;
    /** Over the word features alone: a server whose embedder is another model. */
    words: StoredHead;
  };
}

/**
 * The data file beside this module. tsc copies no data files into dist/, so the built service reads the one in
 * the source tree, as it reads openapi/ from the repository (http/document.ts).
 */
function modelPath(): string {
  const beside = fileURLToPath(new URL('./statement-model.json', import.meta.url));
  if (existsSync(beside)) return beside;
  return beside.replace(`${sep}dist${sep}src${sep}`, `${sep}src${sep}`);
}

let loaded: StoredStatementModel | undefined;

/**
 * The trained weights, read once (at the first extractor's construction) and only when their SHA-256 is the one
 * the training recorded beside them: a file changed by hand or cut short fails loudly instead of judging badly.
 */
export function storedStatementModel(): StoredStatementModel {
  if (loaded) return loaded;
  const path = modelPath();
  const bytes = readFileSync(path);
  const digest = createHash('sha256').update(bytes).digest('hex');
  if (digest !== STATEMENT_MODEL_SHA256) {
    throw new Error(
      `${path}: SHA-256 ${digest}, but statement-model.sha256.ts records ${STATEMENT_MODEL_SHA256}: ` +
        'the weights are not the ones trained (npm run train:memory writes both)',
    );
  }
  loaded = JSON.parse(bytes.toString('utf8')) as StoredStatementModel;
  return loaded;
}
