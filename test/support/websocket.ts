import WebSocket from 'ws';

/** A message pvai sent on a socket: a response event, or an error message. */
export interface SocketMessage {
  type: string;
  sequence_number?: number;
  status?: number;
  error?: { message: string; type: string; code: string; param: string | null };
  response?: { id: string; status: string; output: unknown[]; previous_response_id?: string | null };
  delta?: string;
  [field: string]: unknown;
}

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed', 'response.cancelled']);

/** The ws:// URL of a server's /z1/responses. */
export function responsesSocketUrl(serverUrl: string, path = '/z1/responses'): string {
  return `${serverUrl.replace(/^http/, 'ws')}${path}`;
}

/** What a refused upgrade was answered: the status, the headers, the body (the error body, as JSON). */
export interface RefusedUpgrade {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: { code: string; error: { code: string; type: string; param: string | null } };
}

/**
 * A raw WebSocket client (the `ws` package, as the openai SDK's ResponsesWS uses it) whose messages are read one
 * by one, and whose turns are read up to their terminal event or error message, as Open Responses' suite reads them.
 */
export class TestSocket {
  readonly #received: SocketMessage[] = [];
  #wake: (() => void) | undefined;
  readonly closed: Promise<{ code: number; reason: string }>;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.#received.push(JSON.parse(data.toString()) as SocketMessage);
      this.#wake?.();
    });
    this.closed = new Promise((resolve) => {
      ws.once('close', (code, reason) => {
        this.#wake?.();
        resolve({ code, reason: reason.toString() });
      });
    });
  }

  /**
   * Opens a socket with these headers (the key), from `localAddress` (any 127.x on Linux loopback); rejects with the
   * RefusedUpgrade when the server refuses it.
   */
  static open(url: string, headers: Record<string, string>, localAddress?: string): Promise<TestSocket> {
    const ws = new WebSocket(url, { headers, ...(localAddress ? { localAddress } : {}) });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new TestSocket(ws)));
      ws.once('unexpected-response', (_req, res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => {
          text += chunk.toString();
        });
        res.on('end', () => {
          reject(
            Object.assign(new Error(`upgrade refused: ${res.statusCode}`), {
              refused: { status: res.statusCode ?? 0, headers: res.headers, body: text ? JSON.parse(text) : {} },
            }),
          );
          ws.terminate();
        });
      });
      ws.once('error', reject);
    });
  }

  /** The answer to an upgrade that must be refused. */
  static async refused(url: string, headers: Record<string, string>, localAddress?: string): Promise<RefusedUpgrade> {
    try {
      const socket = await TestSocket.open(url, headers, localAddress);
      socket.ws.terminate();
    } catch (err) {
      const refused = (err as { refused?: RefusedUpgrade }).refused;
      if (refused) return refused;
      throw err;
    }
    throw new Error('the upgrade was accepted');
  }

  /** The next message, or undefined once the socket has closed with nothing left to read. */
  async next(timeoutMs = 10_000): Promise<SocketMessage | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (this.#received.length === 0) {
      if (this.ws.readyState === WebSocket.CLOSED) return undefined;
      if (Date.now() > deadline) throw new Error('no message in time');
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
        setTimeout(resolve, 50);
      });
    }
    return this.#received.shift();
  }

  /** Sends `body` as one message and reads its answer: the events up to the terminal one, or the error message. */
  async turn(body: Record<string, unknown> | string): Promise<SocketMessage[]> {
    this.ws.send(typeof body === 'string' ? body : JSON.stringify(body));
    return this.read();
  }

  /** Reads one answer: events up to a terminal event, or an error message. */
  async read(): Promise<SocketMessage[]> {
    const messages: SocketMessage[] = [];
    for (;;) {
      const message = await this.next();
      if (!message) throw new Error(`the socket closed after ${JSON.stringify(messages.map((m) => m.type))}`);
      messages.push(message);
      if (message.type === 'error' || TERMINAL.has(message.type)) return messages;
    }
  }

  close(): Promise<{ code: number; reason: string }> {
    this.ws.close();
    return this.closed;
  }
}
