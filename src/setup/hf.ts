import { AppError } from '../errors/index.js';

/** A file on Hugging Face, as `pvai models pull` takes it. */
export interface HuggingFaceFile {
  url: string;
  /** Authorization for gated or private repositories, from HF_TOKEN. */
  headers: Record<string, string>;
  fileName: string;
}

export const HF_SYNTAX = 'hf:<owner>/<repo>/<file.gguf>[#<revision>]';

/**
 * `hf:<owner>/<repo>/<path/to/file.gguf>[#<revision>]` → the file's download URL (`/resolve/`), in the
 * form node-llama-cpp's model URIs use too. HF_ENDPOINT points at a mirror and HF_TOKEN is sent when
 * set, as the Hugging Face tools do. Returns undefined for anything that is not an `hf:` reference.
 */
export function huggingFaceFile(reference: string, env: NodeJS.ProcessEnv = process.env): HuggingFaceFile | undefined {
  if (!reference.startsWith('hf:')) return undefined;
  const [spec = '', revision = 'main'] = reference.slice(3).split('#');
  const parts = spec.split('/').filter((p) => p !== '');
  const [owner, repo, ...file] = parts;
  if (!owner || !repo || file.length === 0 || !file.at(-1)?.endsWith('.gguf')) {
    throw new AppError(
      'INVALID_PARAMETER',
      `not a Hugging Face model file reference: ${reference} (expected ${HF_SYNTAX})`,
      { field: 'source' },
    );
  }
  const endpoint = (env.HF_ENDPOINT || 'https://huggingface.co').replace(/\/+$/, '');
  const path = file.map(encodeURIComponent).join('/');
  return {
    url: `${endpoint}/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}/resolve/${encodeURIComponent(revision)}/${path}`,
    headers: env.HF_TOKEN ? { authorization: `Bearer ${env.HF_TOKEN}` } : {},
    fileName: file.at(-1) ?? 'model.gguf',
  };
}
