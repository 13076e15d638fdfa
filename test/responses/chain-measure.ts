/**
 * Measures a chain of `previous_response_id` turns over HTTP: the bytes of the requests sent vs the bytes the
 * responses and their items take in the database (what is stored must grow with the chain's length, not its square).
 *   node --import tsx test/responses/chain-measure.ts            (TURNS=200 PAD=0 BACKEND=sqlite|postgres)
 */
import { startResponses } from './support.js';

const turns = Number(process.env.TURNS ?? 200);
/** Characters added to each turn's input (the finding's requests were ~690 bytes each: PAD=560). */
const pad = 'p'.repeat(Number(process.env.PAD ?? 0));
const backend = process.env.DATABASE_URL && process.env.BACKEND === 'postgres' ? 'postgres' : 'sqlite';
const h = await startResponses(backend, { defaultText: 'Noted, I will remember that detail for later.' });
let sent = 0;
let previous: string | null = null;
type Created = { id: string };
for (let i = 0; i < turns; i++) {
  const body: Record<string, unknown> = {
    model: 'PV-TURBO',
    input: `Turn ${i}: here is one more fact worth keeping in mind, number ${i}, about the project plan.${pad}`,
    ...(previous ? { previous_response_id: previous } : {}),
  };
  sent += Buffer.byteLength(JSON.stringify(body));
  const res = await h.create<Created>(body);
  if (res.status !== 200) throw new Error(res.text);
  previous = res.body.id;
}
const db = h.server.running.runtime.db;
const [r] = await db.query<{ n: number }>(
  'SELECT SUM(LENGTH(body) + LENGTH(conversation)) AS n FROM responses WHERE account_id = $1',
  [h.accountId],
);
const [i] = await db.query<{ n: number }>('SELECT SUM(LENGTH(item)) AS n FROM response_items WHERE account_id = $1', [
  h.accountId,
]);
const stored = Number(r?.n) + Number(i?.n);
console.log(
  JSON.stringify({
    backend,
    turns,
    sentKiB: +(sent / 1024).toFixed(1),
    storedKiB: +(stored / 1024).toFixed(1),
    ratio: +(stored / sent).toFixed(2),
  }),
);
await h.close();
