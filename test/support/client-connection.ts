import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { parseResponses, type RawResponse } from './raw-http.js';

/**
 * One client connection held open by a test, over a bare TCP socket: what it received, whether the
 * server closed it. `from` picks the client address (Linux loopback answers from any 127.x.y.z), so one
 * test can be several clients.
 */
export interface ClientConnection {
  readonly socket: Socket;
  /** Every byte received so far. */
  received(): Buffer;
  /** The complete responses received so far. */
  responses(): RawResponse[];
  /** True once the connection is closed (by the server, or by `destroy`). */
  isClosed(): boolean;
  /** Resolves when the connection closes. */
  readonly closed: Promise<void>;
  /** Whether the connection closes within `timeoutMs` (default 5 s). */
  closesWithin(timeoutMs?: number): Promise<boolean>;
  send(data: string): void;
  /** Resolves with the responses once `count` have arrived complete; rejects after `timeoutMs`. */
  waitForResponses(count: number, timeoutMs?: number): Promise<RawResponse[]>;
  /** Resolves once `test` holds of the bytes received; rejects after `timeoutMs`. */
  waitForData(test: (text: string) => boolean, timeoutMs?: number): Promise<string>;
  destroy(): void;
}

export async function openConnection(url: string, options: { from?: string } = {}): Promise<ClientConnection> {
  const { hostname, port } = new URL(url);
  const socket = connect({
    host: hostname,
    port: Number(port),
    ...(options.from ? { localAddress: options.from } : {}),
  });
  const chunks: Buffer[] = [];
  let closed = false;
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const waiter of waiters) waiter();
  };
  socket.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    wake();
  });
  // A reset from the server is one way to be closed; the test looks at isClosed(), not the error.
  socket.on('error', () => undefined);
  const closedPromise = new Promise<void>((resolve) =>
    socket.once('close', () => {
      closed = true;
      wake();
      resolve();
    }),
  );
  await once(socket, 'connect');
  const received = () => Buffer.concat(chunks);
  const until = <T>(probe: () => T | undefined, timeoutMs: number, what: string): Promise<T> =>
    new Promise((resolve, reject) => {
      const check = () => {
        const value = probe();
        if (value === undefined) return;
        waiters.delete(check);
        clearTimeout(timer);
        resolve(value);
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`${what} within ${timeoutMs} ms; received: ${received().toString('latin1').slice(0, 500)}`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  return {
    socket,
    received,
    responses: () => parseResponses(received(), false).responses,
    isClosed: () => closed,
    closed: closedPromise,
    closesWithin(timeoutMs = 5000) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      });
      return Promise.race([closedPromise.then(() => true), late]).finally(() => clearTimeout(timer));
    },
    send: (data) => {
      socket.write(data);
    },
    waitForResponses(count, timeoutMs = 10_000) {
      return until(
        () => {
          const { responses } = parseResponses(received(), false);
          return responses.length >= count ? responses : undefined;
        },
        timeoutMs,
        `no ${count} responses`,
      );
    },
    waitForData(test, timeoutMs = 10_000) {
      return until(
        () => {
          const text = received().toString('utf8');
          return test(text) ? text : undefined;
        },
        timeoutMs,
        'the expected data did not arrive',
      );
    },
    destroy: () => socket.destroy(),
  };
}
