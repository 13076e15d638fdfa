import { z } from 'zod';
import { EMBEDDING_MODEL_ID, MODEL_IDS } from '../kernel/index.js';

/** What an alias may stand for: a chat model of the interface, or the embedding model. */
const ALIAS_TARGETS = [...MODEL_IDS, EMBEDDING_MODEL_ID] as const;

/** OpenAI's model names and the like (`gpt-4o-mini`, `text-embedding-3-small`, `llama3.1:8b`, `org/model`). */
const ALIAS_NAME = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$/;

/**
 * Other names for the PV models (`modelAliases`, or PVAI_MODEL_ALIASES=`gpt-4o-mini=PV-TURBO,…`), so that a client
 * written for OpenAI runs with nothing changed but its base URL. None by default: which OpenAI name a tier stands
 * for is the operator's to say, once they know what serves it (a 135M local model answering `gpt-4o` would be
 * a promise the default cannot keep). An alias never shadows a PV model's own id.
 */
export const modelAliasesSchema = z
  .record(
    z.string().regex(ALIAS_NAME, 'an alias is 1-64 letters, digits and . _ : / - (starting with a letter or digit)'),
    z.enum(ALIAS_TARGETS),
  )
  .refine((aliases) => !Object.keys(aliases).some((name) => (ALIAS_TARGETS as readonly string[]).includes(name)), {
    error: 'an alias cannot be a PV model id itself',
  })
  .default({});

/** PVAI_MODEL_ALIASES: `name=PV-MODEL` pairs separated by commas; undefined when unset or empty. */
export function aliasesFromEnv(value: string | undefined): Record<string, string> | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const out: Record<string, string> = {};
  for (const pair of value.split(',')) {
    const at = pair.indexOf('=');
    // A pair without `=` is kept with an empty target, for the schema to refuse with its own message.
    const [name, target] = at < 0 ? [pair, ''] : [pair.slice(0, at), pair.slice(at + 1)];
    out[name.trim()] = target.trim();
  }
  return out;
}
