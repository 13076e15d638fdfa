/**
 * The verdicts: what makes a run fail. A 5xx (but the documented 503 of a capability this server does not
 * have yet), an error response without the error body, a connection left hanging, an unhealthy server
 * afterwards, an error in its log.
 */
import { readFileSync } from 'node:fs';
import { isErrorBody, type RawExchange } from '../../../test/support/raw-http.js';
import type { Case } from './generator.js';
import type { Target } from './target.js';

export interface Finding {
  index: number;
  label: string;
  problem: string;
  detail: string;
}

/** The 503 of a capability this server does not have yet (documented, like schemathesis accepts it). */
function plannedUnavailable(status: number, body: string, path: string, head: boolean): boolean {
  if (status !== 503) return false;
  if (head) return /^\/(z1\/(memory|rag|sla)|metrics)/.test(path);
  try {
    const parsed = JSON.parse(body) as { code?: string; message?: string };
    return (
      parsed.code === 'SERVICE_UNAVAILABLE' && (parsed.message ?? '').endsWith('is not available on this server yet')
    );
  } catch {
    return false;
  }
}

export function judge(c: Case, exchange: RawExchange): Finding[] {
  const findings: Finding[] = [];
  const firstLine =
    (c.steps.find((s) => typeof s === 'string' || Buffer.isBuffer(s)) ?? '').toString().split('\r\n')[0] ?? '';
  const path = firstLine.split(' ')[1] ?? '';
  for (const response of exchange.responses) {
    const snippet = `${response.status} ${response.body.slice(0, 200)}`;
    if (response.status >= 500 && !plannedUnavailable(response.status, response.body, path, c.head)) {
      findings.push({ index: c.index, label: c.label, problem: '5xx', detail: snippet });
    }
    if (response.status >= 400 && !c.head && !isErrorBody(response.body)) {
      findings.push({ index: c.index, label: c.label, problem: 'no error body', detail: snippet });
    }
  }
  if (!exchange.closedByServer && exchange.responses.length < c.responses && exchange.ms >= c.timeoutMs - 50) {
    findings.push({
      index: c.index,
      label: c.label,
      problem: 'hung',
      detail: `${exchange.responses.length} of ${c.responses} responses and still open after ${Math.round(exchange.ms)} ms`,
    });
  }
  return findings;
}

/** Liveness, readiness, usage and an authenticated chat completion after the run: each must answer 200. */
export async function healthAfter(target: Target): Promise<string[]> {
  const problems: string[] = [];
  const check = async (name: string, path: string, init: RequestInit = {}) => {
    try {
      const res = await fetch(target.url + path, { ...init, signal: AbortSignal.timeout(10_000) });
      const text = await res.text();
      if (res.status !== 200) problems.push(`${name}: ${res.status} ${text.slice(0, 200)}`);
    } catch (err) {
      problems.push(`${name}: ${(err as Error).message}`);
    }
  };
  const auth = { Authorization: `Bearer ${target.apiKey}` };
  await check('liveness', '/z1/health');
  await check('readiness', '/z1/health/ready');
  await check('usage', '/z1/usage', { headers: auth });
  await check('chat completion', '/z1/chat/completions', {
    method: 'POST',
    headers: { ...auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      model: 'PV-TURBO',
      user_id: 'fuzz-after',
      messages: [{ role: 'user', content: 'still there?' }],
    }),
  });
  return problems;
}

/** The server log's lines at level error or above, from `from` (its length when the run started). */
export function serverLogErrors(path: string | undefined, from: number): string[] {
  if (!path) return [];
  const out: string[] = [];
  for (const line of readFileSync(path, 'utf8').slice(from).split('\n')) {
    try {
      const entry = JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string } };
      if ((entry.level ?? 0) >= 50) out.push(`${entry.msg ?? ''}: ${entry.err?.message ?? ''}`.slice(0, 300));
    } catch {
      // not a JSON log line
    }
  }
  return out;
}

/** Prints the findings, grouped by problem, then PASS or FAIL; returns whether the run failed. */
export function printVerdict(
  findings: readonly Finding[],
  health: string[],
  logErrors: string[],
  seed: number,
): boolean {
  const byProblem = new Map<string, Finding[]>();
  for (const f of findings) byProblem.set(f.problem, [...(byProblem.get(f.problem) ?? []), f]);
  for (const [problem, list] of byProblem) {
    console.log(`FINDING ${problem}: ${list.length} case(s); replay one with --seed ${seed} --only N --show`);
    for (const f of list.slice(0, 10))
      console.log(`  case ${f.index}: ${f.label}\n    ${f.detail.replace(/\n/g, ' ')}`);
  }
  for (const problem of health) console.log(`FINDING unhealthy after the run: ${problem}`);
  for (const line of logErrors.slice(0, 10)) console.log(`FINDING server logged an error: ${line}`);
  if (logErrors.length > 10) console.log(`  … ${logErrors.length - 10} more error lines in the server log`);
  const failed = findings.length > 0 || health.length > 0 || logErrors.length > 0;
  console.log(failed ? 'FAIL' : 'PASS: no 5xx, every error with the error body, nothing hanging, healthy after');
  return failed;
}
