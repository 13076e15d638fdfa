import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LocalServer {
  url: string;
  port: number;
  /** Every request the server saw: method and path. */
  seen: Array<{ path: string; host: string | undefined }>;
  close(): Promise<void>;
}

export async function listen(
  handler: (req: IncomingMessage, res: ServerResponse, server: LocalServer) => void,
  host = '127.0.0.1',
): Promise<LocalServer> {
  const seen: LocalServer['seen'] = [];
  const state = {} as LocalServer;
  const server: Server = createServer((req, res) => {
    seen.push({ path: req.url ?? '', host: req.headers.host });
    handler(req, res, state);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  Object.assign(state, {
    url: `http://${host}:${port}`,
    port,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
  return state;
}

/** An article-like HTML page of about `kb` kilobytes, with `fact` in its middle. */
export function articlePage(title: string, fact: string, kb = 20): string {
  const para = (i: number) =>
    `<p>Paragraph ${i} of ${title}: the committee reviewed schedules, budgets, vendor contracts and the` +
    ` maintenance backlog of the regional network in considerable detail before adjourning.</p>`;
  const count = Math.max(2, Math.round((kb * 1024) / 220));
  const body: string[] = [];
  for (let i = 0; i < count; i++) {
    body.push(para(i));
    if (i === Math.floor(count / 2)) body.push(`<p>${fact}</p>`);
  }
  return (
    `<!doctype html><html><head><title>${title}</title><meta charset="utf-8"></head><body>` +
    `<nav><a href="/">Home</a> <a href="/about">About</a></nav><script>var tracking = "do not read";</script>` +
    `<article><h1>${title}</h1>${body.join('\n')}</article><footer>Copyright footer</footer></body></html>`
  );
}
