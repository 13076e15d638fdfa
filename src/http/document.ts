import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';

/** The repository root: the nearest folder above this file holding openapi/openapi.yaml (works from src/ and dist/). */
function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'openapi', 'openapi.yaml'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('openapi/openapi.yaml not found above the service code');
    dir = parent;
  }
}

export interface ContractDocument {
  yaml: string;
  json: string;
  /** A fresh parsed copy each call: openapi-backend dereferences in place. */
  parse(): Record<string, unknown>;
  /**
   * A copy for ajv: identical but for `discriminator.mapping`, which ajv does not support. Every
   * mapping in the document names exactly the branch whose `enum` holds that value, which is what
   * ajv derives by itself, so validation is unchanged.
   */
  forValidation(): Record<string, unknown>;
  version: string;
  /** Every operationId of the document: the endpoints a request can be counted under. */
  operationIds: ReadonlySet<string>;
}

/** The operationIds of the document's paths. */
function operationIdsOf(paths: Record<string, Record<string, unknown>> | undefined): Set<string> {
  const ids = new Set<string>();
  for (const item of Object.values(paths ?? {})) {
    for (const operation of Object.values(item)) {
      const id = (operation as { operationId?: unknown } | null)?.operationId;
      if (typeof id === 'string') ids.add(id);
    }
  }
  return ids;
}

let cached: ContractDocument | undefined;

/** The contract, read once: served at /openapi.yaml and /openapi.json and used for routing and validation. */
export function loadContract(): ContractDocument {
  if (cached) return cached;
  const yaml = readFileSync(join(projectRoot(), 'openapi', 'openapi.yaml'), 'utf8');
  const parsed = parseYaml(yaml) as {
    info: { version: string };
    paths?: Record<string, Record<string, unknown>>;
  };
  const json = JSON.stringify(parsed);
  const withoutMappings = JSON.stringify(parsed, (key, value) =>
    key === 'discriminator' && value && typeof value === 'object' ? { propertyName: value.propertyName } : value,
  );
  cached = {
    yaml,
    json,
    parse: () => JSON.parse(json) as Record<string, unknown>,
    forValidation: () => JSON.parse(withoutMappings) as Record<string, unknown>,
    version: parsed.info.version,
    operationIds: operationIdsOf(parsed.paths),
  };
  return cached;
}
