/**
 * The fixed-rate load generator, run as a child process of its own for each window (`rate.ts` starts it): open
 * loop over 64 keep-alive connections, each request's bytes built once, responses read by counting bytes
 * (Content-Length or chunked) without making strings or objects per response.
 *
 * Why not undici in the bench's own process, as before: that process had run the throughput phases and held
 * their garbage, and undici makes several objects per request. Its own collections (scavenges of 4-15 ms and
 * two major collections in a 5 s window, measured with a `PerformanceObserver` beside per-request
 * timestamps) stopped it from reading answers, and the stalls were counted as the server's latency. The
 * slower the server, the more requests were in flight across a scavenge, the more survived and were promoted,
 * and the more often the generator stalled: the error grew with the latency it measured.
 *
 * Input: one JSON line on stdin ({ host, port, path, rps, seconds, heads: string[], body }), `heads` being
 * the request's header lines, used in turn. Output: one JSON line ({ p50, p99, sent, failed }).
 */
import { connect, type Socket } from 'node:net';

interface Job {
  host: string;
  port: number;
  path: string;
  rps: number;
  seconds: number;
  /** Header lines (without Host and Content-Length) of the requests, used in turn. */
  heads: string[];
  body: string;
}

const CONNECTIONS = 64;
const CR = 13;
const LF = 10;

/** A response's bytes as they come: the head, then a Content-Length body or chunks. */
class ResponseReader {
  #state: 'head' | 'body' | 'chunkSize' | 'chunkData' | 'chunkEnd' | 'trailer' = 'head';
  /** The head's bytes so far (a head split across reads is joined; heads are small). */
  #head: Buffer[] = [];
  #left = 0;
  #size = 0;
  #lineLength = 0;
  status = 0;

  /** Reads `buf` from `at`; returns the index after the response's end, or -1 if it has not ended. */
  read(buf: Buffer, at: number): number {
    let i = at;
    while (i < buf.length) {
      switch (this.#state) {
        case 'head': {
          const end = buf.indexOf('\r\n\r\n', i);
          if (end < 0) {
            this.#head.push(buf.subarray(i));
            return -1;
          }
          this.#head.push(buf.subarray(i, end + 4));
          const head = Buffer.concat(this.#head).toString('latin1');
          this.#head = [];
          i = end + 4;
          this.status = Number(head.slice(9, 12));
          const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
          if (length) {
            this.#left = Number(length[1]);
            this.#state = 'body';
            if (this.#left === 0) return this.#done(i);
          } else if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
            this.#state = 'chunkSize';
            this.#size = 0;
          } else return this.#done(i);
          break;
        }
        case 'body': {
          const take = Math.min(this.#left, buf.length - i);
          this.#left -= take;
          i += take;
          if (this.#left === 0) return this.#done(i);
          break;
        }
        case 'chunkSize': {
          const c = buf[i++] as number;
          if (c === LF) {
            this.#left = this.#size;
            this.#state = this.#size === 0 ? 'trailer' : 'chunkData';
            this.#lineLength = 0;
          } else if (c !== CR && c !== 59 /* ; */) {
            const digit = c <= 57 ? c - 48 : (c | 32) - 87;
            if (digit >= 0 && digit < 16) this.#size = this.#size * 16 + digit;
          }
          break;
        }
        case 'chunkData': {
          const take = Math.min(this.#left, buf.length - i);
          this.#left -= take;
          i += take;
          if (this.#left === 0) this.#state = 'chunkEnd';
          break;
        }
        case 'chunkEnd': {
          if (buf[i++] === LF) {
            this.#state = 'chunkSize';
            this.#size = 0;
          }
          break;
        }
        case 'trailer': {
          // After the last chunk: trailer lines, then an empty line.
          const c = buf[i++] as number;
          if (c === LF) {
            if (this.#lineLength === 0) return this.#done(i);
            this.#lineLength = 0;
          } else if (c !== CR) this.#lineLength++;
          break;
        }
      }
    }
    return -1;
  }

  #done(at: number): number {
    this.#state = 'head';
    return at;
  }
}

async function run(job: Job): Promise<{ p50: number; p99: number; sent: number; failed: number }> {
  const requests = job.heads.map((head) => {
    const body = Buffer.from(job.body);
    const lines = `POST ${job.path} HTTP/1.1\r\nHost: ${job.host}:${job.port}\r\n${head}Content-Length: ${body.length}\r\n\r\n`;
    return Buffer.concat([Buffer.from(lines, 'latin1'), body]);
  });
  const total = job.rps * job.seconds;
  // The first second is not counted: connections and the server's code paths warm up in it.
  const latencies = new Float64Array(total);
  let counted = 0;
  let failed = 0;
  let answered = 0;
  const queue: number[] = [];
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => {
    finish = resolve;
  });

  interface Connection {
    socket: Socket;
    reader: ResponseReader;
    /** The request in flight (its index), or -1. */
    current: number;
    sentAt: number;
  }
  const idle: Connection[] = [];
  const send = (c: Connection, i: number, at: number) => {
    c.current = i;
    c.sentAt = at;
    c.socket.write(requests[i % requests.length] as Buffer);
  };
  /** The connection's request is over: its latency counted (past the first second) or its failure. */
  const answer = (c: Connection, ok: boolean) => {
    const i = c.current;
    c.current = -1;
    if (!ok) failed++;
    else if (i >= job.rps) latencies[counted++] = performance.now() - c.sentAt;
    if (++answered === total) finish();
  };
  const adopt = (c: Connection) => {
    const next = queue.shift();
    if (next !== undefined) send(c, next, performance.now());
    else idle.push(c);
  };
  const open = (): Promise<Connection> =>
    new Promise((resolve, reject) => {
      const socket = connect({ host: job.host, port: job.port, noDelay: true });
      const c: Connection = { socket, reader: new ResponseReader(), current: -1, sentAt: 0 };
      socket.once('connect', () => {
        socket.off('error', reject);
        socket.on('error', () => undefined);
        resolve(c);
      });
      socket.once('error', reject);
      socket.on('data', (buf: Buffer) => {
        let at = 0;
        while (at < buf.length && c.current >= 0) {
          at = c.reader.read(buf, at);
          if (at < 0) return;
          answer(c, c.reader.status >= 200 && c.reader.status < 300);
          adopt(c);
        }
      });
      socket.on('close', () => {
        // A connection the server closed: its request failed, and a new connection takes its place.
        const k = idle.indexOf(c);
        if (k >= 0) idle.splice(k, 1);
        if (c.current >= 0) answer(c, false);
        if (answered < total) open().then(adopt, () => undefined);
      });
    });
  for (const c of await Promise.all(Array.from({ length: CONNECTIONS }, open))) idle.push(c);

  const start = performance.now();
  let i = 0;
  const dispatch = () => {
    const now = performance.now();
    while (i < total && start + (i * 1000) / job.rps <= now) {
      const c = idle.pop();
      if (c) send(c, i, now);
      else queue.push(i);
      i++;
    }
    if (i < total) {
      const wait = start + (i * 1000) / job.rps - performance.now();
      // Timers fire on whole milliseconds: a request goes out up to 1 ms late, never early, and nothing spins.
      setTimeout(dispatch, Math.max(0, wait));
    }
  };
  dispatch();
  await finished;
  for (const c of idle) {
    c.socket.removeAllListeners('close');
    c.socket.destroy();
  }
  const sorted = latencies.subarray(0, counted).sort();
  const pick = (p: number) => sorted[Math.min(counted - 1, Math.floor(counted * p))] ?? Number.NaN;
  return { p50: pick(0.5), p99: pick(0.99), sent: total, failed };
}

let input = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) input += chunk;
const result = await run(JSON.parse(input) as Job);
process.stdout.write(`${JSON.stringify(result)}\n`);
process.exit(0);
