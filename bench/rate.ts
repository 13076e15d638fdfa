import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Pool } from 'undici';

export interface RatedLatency {
  p50: number;
  p99: number;
  sent: number;
  failed: number;
}

/**
 * Open-loop load at a fixed rate (requests are started on schedule whatever the answers do), with
 * each latency measured in microseconds: the precision the "added p50 ≤ 0.3 ms" targets need. The load comes
 * from a process of its own, started for the window (`rate-generator.ts` says why).
 */
export async function latencyAtRate(opts: {
  origin: string;
  path: string;
  rps: number;
  seconds: number;
  headers: (i: number) => Record<string, string>;
  body: string;
}): Promise<RatedLatency> {
  const url = new URL(opts.origin);
  const heads = Array.from({ length: opts.rps * opts.seconds }, (_, i) =>
    Object.entries(opts.headers(i))
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join(''),
  );
  const job = {
    host: url.hostname,
    port: Number(url.port),
    path: opts.path,
    rps: opts.rps,
    seconds: opts.seconds,
    heads,
    body: opts.body,
  };
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'rate-generator.ts')], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  child.stdin.end(JSON.stringify(job));
  const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
  if (child.exitCode === null) await once(child, 'exit');
  return JSON.parse(line) as RatedLatency;
}

/** Time to first content chunk and mean gap between chunks of sequential streamed requests. */
export async function streamTiming(opts: {
  origin: string;
  path: string;
  count: number;
  headers: (i: number) => Record<string, string>;
  body: string;
}): Promise<{ ttftP50: number; gapMean: number }> {
  const pool = new Pool(opts.origin, { connections: 1 });
  const ttft: number[] = [];
  const gaps: number[] = [];
  for (let i = 0; i < opts.count + 20; i++) {
    const t0 = performance.now();
    const res = await pool.request({ path: opts.path, method: 'POST', headers: opts.headers(i), body: opts.body });
    let first = 0;
    let last = 0;
    for await (const buf of res.body) {
      const now = performance.now();
      if (!String(buf).includes('"content":"word')) continue;
      if (!first) first = now;
      else if (i >= 20) gaps.push(now - last);
      last = now;
    }
    if (i >= 20 && first) ttft.push(first - t0);
  }
  await pool.close();
  ttft.sort((a, b) => a - b);
  return {
    ttftP50: ttft[Math.floor(ttft.length / 2)] ?? Number.NaN,
    gapMean: gaps.reduce((a, b) => a + b, 0) / Math.max(1, gaps.length),
  };
}
