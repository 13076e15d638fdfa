/**
 * The fuzz stage of .ci/run: a seeded generator of malformed HTTP against a running pvai server, over
 * raw TCP sockets so that framing can be broken as well as bodies, encodings, headers and methods.
 * Schemathesis sends what the contract describes, valid or not; this sends what no client library
 * would: lying lengths, broken chunking, request smuggling, compressed garbage, zip bombs, JSON nested
 * thousands of levels deep, repeated and ambiguous credentials, bytes that are not HTTP, slow clients.
 *
 *   node --import tsx test/fuzz/malformed-http.ts [--seed N] [--requests N] [--concurrency N]
 *                                                     [--server-log FILE] [--only CASE] [--show]
 *
 * Needs PVAI_URL, PVAI_API_KEY and PVAI_ADMIN_TOKEN (test/contract/serve-for-contract.mjs sets them).
 * Every case is made from the seed and its number alone, so `--only N --show` replays and prints case N
 * of a run. It passes (exit 0) when:
 *   - no response is a 5xx, but the documented 503 of a capability this server does not have yet;
 *   - every error response (4xx, 5xx) but those to HEAD carries the error body
 *     {status: "error", message, code, details} - the server's own pre-routing answers included;
 *   - no connection is left hanging (no answer and not closed within the deadlines);
 *   - afterwards the server is healthy: liveness, readiness, an authenticated chat completion, usage;
 *   - with --server-log, the server logged nothing at level error or above while it ran.
 *
 * The parts, in test/fuzz/malformed-http/: generator.ts makes the cases (with random.ts, target.ts,
 * bodies.ts, framing.ts), client.ts sends them over raw sockets and tallies the answers, verdicts.ts judges.
 */
import { readFileSync } from 'node:fs';
import { runCases, Tally } from './malformed-http/client.js';
import { makeCase } from './malformed-http/generator.js';
import { prepare } from './malformed-http/target.js';
import { type Finding, healthAfter, judge, printVerdict, serverLogErrors } from './malformed-http/verdicts.js';

interface Options {
  seed: number;
  requests: number;
  concurrency: number;
  serverLog: string | undefined;
  only: number | undefined;
  show: boolean;
}

function options(argv: string[]): Options {
  const out: Options = { seed: 1, requests: 3000, concurrency: 16, serverLog: undefined, only: undefined, show: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${arg} needs a value`);
      return v;
    };
    if (arg === '--seed') out.seed = Number(value());
    else if (arg === '--requests') out.requests = Number(value());
    else if (arg === '--concurrency') out.concurrency = Number(value());
    else if (arg === '--server-log') out.serverLog = value();
    else if (arg === '--only') out.only = Number(value());
    else if (arg === '--show') out.show = true;
    else throw new Error(`unknown argument ${arg}`);
  }
  for (const [name, v] of Object.entries({ seed: out.seed, requests: out.requests, concurrency: out.concurrency })) {
    if (!Number.isInteger(v) || v < 0) throw new Error(`--${name} must be a non-negative integer`);
  }
  return out;
}

async function main(): Promise<void> {
  const opts = options(process.argv.slice(2));
  const target = await prepare();
  const logStart = opts.serverLog ? readFileSync(opts.serverLog, 'utf8').length : 0;
  const indexes = opts.only !== undefined ? [opts.only] : Array.from({ length: opts.requests }, (_, i) => i);
  const started = performance.now();
  const findings: Finding[] = [];
  const tally = new Tally();
  await runCases(
    target.url,
    indexes,
    (index) => makeCase(index, opts.seed, target),
    opts,
    (c, exchange) => {
      tally.add(c, exchange);
      findings.push(...judge(c, exchange));
    },
  );
  const seconds = (performance.now() - started) / 1000;
  const health = await healthAfter(target);
  const logErrors = serverLogErrors(opts.serverLog, logStart);

  console.log(
    `malformed-HTTP fuzz: seed ${opts.seed}, ${indexes.length} cases, concurrency ${opts.concurrency}, ${seconds.toFixed(1)} s`,
  );
  tally.print();
  process.exitCode = printVerdict(findings, health, logErrors, opts.seed) ? 1 : 0;
}

await main();
