import type { Schema } from '../http/index.js';
import { MODEL_IDS, type ModelId } from '../kernel/index.js';

export type ModelServer = Schema<'ModelServer'>;

/** A route's targets as far as saying what serves them goes (config/routing.ts's TargetConfig). */
interface RouteTarget {
  provider: 'local' | 'openai-compatible';
  model: string;
  modelPath?: string | undefined;
  baseUrl?: string;
}

/**
 * Parameters a model's name states (`SmolLM2-135M`, `qwen2.5:7b`, `Llama-3.1-70B`), or undefined. Millions and
 * billions only: a `k` in a name is its context more often than its size (`Phi-3-mini-128k`).
 */
export function statedParameters(name: string): number | undefined {
  const match = /(?:^|[^0-9.])(\d+(?:\.\d+)?)([mb])(?![a-z])/i.exec(name);
  if (!match) return undefined;
  return Number(match[1]) * ((match[2] as string).toLowerCase() === 'b' ? 1e9 : 1e6);
}

/**
 * What a model of that many parameters is good for, as honestly as its size tells: a tier's marketing line says
 * what it is sold as, this what the model serving it can do. Unstated: the model's own card says.
 */
function goodFor(parameters: number | undefined): string {
  if (parameters === undefined) return 'model of unstated size: what it is good for is what its model card says';
  const size = `(${shortCount(parameters)} parameters)`;
  if (parameters < 1e9) return `small model ${size}: short answers, simple tasks`;
  if (parameters < 7e9) return `compact model ${size}: everyday chat and simple code, weak at long reasoning`;
  if (parameters < 30e9) return `mid-size model ${size}: general tasks, code, longer answers`;
  return `large model ${size}: complex reasoning, analysis and code`;
}

function shortCount(n: number): string {
  const [value, unit] = n >= 1e9 ? [n / 1e9, 'B'] : [n / 1e6, 'M'];
  return `${Number(value.toFixed(1))}${unit}`;
}

/** A GGUF path's model name: its file name without `.gguf`. */
export function ggufName(path: string): string {
  return (path.split(/[\\/]/).at(-1) ?? path).replace(/\.gguf$/i, '');
}

/** Where a target's answers come from: the local model's name, or the upstream's model and host. */
function serverOf(target: RouteTarget, localModel: string | undefined): Omit<ModelServer, 'note'> {
  if (target.provider === 'openai-compatible') {
    // The host alone: a base URL's user and password, path and query never leave the configuration.
    const host = target.baseUrl ? new URL(target.baseUrl).host : null;
    return { kind: 'upstream', model: target.model, host };
  }
  const model = target.modelPath ? ggufName(target.modelPath) : localModel;
  return { kind: 'local', model: model ?? 'none', host: null };
}

const sameServer = (a: Omit<ModelServer, 'note'>, b: Omit<ModelServer, 'note'>) =>
  a.kind === b.kind && a.model === b.model && a.host === b.host;

/**
 * What serves each PV model now: the first target of its route (a fallback answers only when it fails), what that
 * model is good for, which other PV models run the same one (on a fresh install all four run one small model),
 * and how many fallbacks follow. `localModel` is the service's local model's name, undefined when none is there.
 */
export function servedBy(
  routing: Readonly<Record<string, readonly RouteTarget[]>>,
  localModel: string | undefined,
): Record<ModelId, ModelServer> {
  const first = (id: ModelId) => {
    const target = routing[id]?.[0];
    return target ? serverOf(target, localModel) : { kind: 'local' as const, model: 'none', host: null };
  };
  const servers = Object.fromEntries(MODEL_IDS.map((id) => [id, first(id)])) as Record<
    ModelId,
    Omit<ModelServer, 'note'>
  >;
  const out = {} as Record<ModelId, ModelServer>;
  for (const id of MODEL_IDS) {
    const server = servers[id];
    const where = server.kind === 'local' ? 'local' : `upstream (${server.host})`;
    const what =
      server.kind === 'local' && server.model === 'none'
        ? 'no local model installed yet: run scripts/setup, or route this model to an upstream'
        : `${where} ${goodFor(statedParameters(server.model))}`;
    const sharing = MODEL_IDS.filter((other) => sameServer(servers[other], server));
    const shared = sharing.length > 1 ? `; ${listed(sharing)} ${sharing.length === 4 ? 'all ' : ''}run it` : '';
    const fallbacks = (routing[id]?.length ?? 1) - 1;
    const then = fallbacks > 0 ? `; ${fallbacks} fallback${fallbacks === 1 ? '' : 's'} after it` : '';
    out[id] = { ...server, note: `${what}${shared}${then}` };
  }
  return out;
}

function listed(ids: readonly string[]): string {
  return ids.length < 2 ? ids.join('') : `${ids.slice(0, -1).join(', ')} and ${ids.at(-1)}`;
}

/** What serves PV-EMBED: the embedding upstream (its model and host), else the local embedding model's GGUF. */
export function embeddingServer(
  upstream: { baseUrl: string; model: string } | undefined,
  localPath: string,
): ModelServer {
  const note = 'sentence-embedding model: search, retrieval, similarity and clustering; it writes no text';
  if (upstream) return { kind: 'upstream', model: upstream.model, host: new URL(upstream.baseUrl).host, note };
  return { kind: 'local', model: ggufName(localPath), host: null, note };
}
