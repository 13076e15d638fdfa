/** The server under test: its address and credentials, and the contract's operations with a valid body each. */
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { parse as parseYaml } from 'yaml';

export interface Operation {
  method: string;
  path: string;
  operationId: string;
  admin: boolean;
  body: (() => Record<string, unknown>) | undefined;
}

export interface Target {
  url: string;
  apiKey: string;
  adminToken: string;
  /** An account of its own for the admin operations' paths, so the one behind PVAI_API_KEY keeps its tier. */
  victimAccountId: string;
  operations: Operation[];
  zipBomb: Buffer;
}

/** A valid body per operation; the fuzzer breaks them. Code execution stays invalid (timeout 0) unless mutated. */
const BODIES: Record<string, (n: number) => Record<string, unknown>> = {
  createChatCompletion: () => ({
    model: 'PV-TURBO',
    user_id: 'fuzz',
    messages: [{ role: 'user', content: 'hello' }],
    max_tokens: 8,
  }),
  executeCode: () => ({ code: 'print(1)', user_id: 'fuzz', timeout: 0 }),
  createMemory: () => ({ user_id: 'fuzz', content: 'likes tea', metadata: { source: 'fuzz' } }),
  updateMemory: () => ({ content: 'likes coffee', metadata: { n: 1 } }),
  searchMemories: () => ({ user_id: 'fuzz', query: 'tea', k: 3 }),
  createDocument: () => ({ user_id: 'fuzz', title: 'doc', content: 'text', metadata: { a: [1, 2] } }),
  searchDocuments: () => ({ user_id: 'fuzz', query: 'text', k: 3 }),
  adminCreateAccount: (n) => ({ email: `fuzz-${n}@example.com`, tier: 'free', credits: 1 }),
  adminUpdateAccount: () => ({ tier: 'startup' }),
  adminAddCredits: () => ({ amount: 1 }),
  adminCreateKey: () => ({ name: 'fuzz' }),
};

function contractOperations(victimAccountId: string): Operation[] {
  const doc = parseYaml(readFileSync(new URL('../../../openapi/openapi.yaml', import.meta.url), 'utf8')) as {
    paths: Record<string, Record<string, { operationId?: string; security?: Array<Record<string, unknown>> }>>;
  };
  const samples: Record<string, string> = {
    model_id: 'PV-TURBO',
    memory_id: 'mem_fuzz',
    document_id: 'doc_fuzz',
    account_id: victimAccountId,
    key_id: 'key_fuzz',
  };
  const out: Operation[] = [];
  let n = 0;
  for (const [template, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (method === 'parameters' || !op.operationId) continue;
      const operationId = op.operationId;
      const make = BODIES[operationId];
      out.push({
        method: method.toUpperCase(),
        path: template.replace(/\{([^}]+)\}/g, (_, name: string) => samples[name] ?? 'x'),
        operationId,
        admin: (op.security ?? []).some((s) => 'AdminToken' in s),
        body: make ? () => make(n++) : undefined,
      });
    }
  }
  return out;
}

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (run this through test/contract/serve-for-contract.mjs)`);
  return value;
};

/**
 * Reads PVAI_URL, PVAI_API_KEY and PVAI_ADMIN_TOKEN, creates the account the admin operations' paths name
 * and makes the zip bomb.
 */
export async function prepare(): Promise<Target> {
  const url = env('PVAI_URL');
  const apiKey = env('PVAI_API_KEY');
  const adminToken = env('PVAI_ADMIN_TOKEN');
  const res = await fetch(`${url}/admin/accounts`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${adminToken}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ email: `fuzz-victim-${Date.now()}@example.com`, tier: 'startup', credits: 10 }),
  });
  if (res.status !== 201) throw new Error(`creating the fuzz account failed: ${res.status} ${await res.text()}`);
  const victimAccountId = ((await res.json()) as { account: { id: string } }).account.id;
  // 20 MB of zeros, ~20 KB gzipped: under the body limit as sent, 20 times over it once inflated.
  const zipBomb = gzipSync(Buffer.alloc(20 * 1024 * 1024), { level: 9 });
  return { url, apiKey, adminToken, victimAccountId, operations: contractOperations(victimAccountId), zipBomb };
}
