/**
 * The floor for any gateway on this machine: node:http in front of an undici pool, forwarding the body
 * to the mock upstream and its answer back, with no other work at all. Run in its own process by
 * bench:chat; prints its URL on stdout. Usage: bare-proxy-server.ts <upstream origin>.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { bufferedRequest } from '../src/providers/index.js';

const upstream = process.argv[2];
if (!upstream) throw new Error('usage: bare-proxy-server.ts <upstream origin>');
const pool = new Pool(upstream, { connections: 64 });

const server = createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  // The same upstream call as pvai's non-streamed path, so the floor stays a floor.
  const answer = await bufferedRequest(
    pool,
    {
      path: '/v1/chat/completions',
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Buffer.concat(chunks),
    },
    new AbortController().signal,
    60_000,
  );
  res.writeHead(answer.statusCode, { 'content-type': 'application/json' });
  res.end(answer.body);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
