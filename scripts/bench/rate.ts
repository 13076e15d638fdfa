import { Pool } from 'undici';

export interface RatedLatency {
  p50: number;
  p99: number;
  sent: number;
  failed: number;
}

/**
 * Open-loop load at a fixed rate (requests are started on schedule whatever the answers do), with
 * each latency measured in microseconds: the precision the "added p50 ≤ 0.3 ms" targets need.
 */
export async function latencyAtRate(opts: {
  origin: string;
  path: string;
  rps: number;
  seconds: number;
  headers: (i: number) => Record<string, string>;
  body: string;
}): Promise<RatedLatency> {
  const pool = new Pool(opts.origin, { connections: 64, pipelining: 1 });
  const samples: number[] = [];
  let failed = 0;
  const total = opts.rps * opts.seconds;
  const start = performance.now();
  const inflight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / opts.rps;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    inflight.push(
      (async () => {
        const t0 = process.hrtime.bigint();
        try {
          const res = await pool.request({
            path: opts.path,
            method: 'POST',
            headers: opts.headers(i),
            body: opts.body,
          });
          await res.body.arrayBuffer();
          if (res.statusCode !== 200) failed++;
          else if (i >= opts.rps) samples.push(Number(process.hrtime.bigint() - t0) / 1e6); // skip the first second
        } catch {
          failed++;
        }
      })(),
    );
  }
  await Promise.all(inflight);
  await pool.close();
  samples.sort((a, b) => a - b);
  const pick = (p: number) => samples[Math.min(samples.length - 1, Math.floor(samples.length * p))] ?? Number.NaN;
  return { p50: pick(0.5), p99: pick(0.99), sent: total, failed };
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
