/**
 * npm run train:memory — trains the statement model the memory extractor runs (src/memory/extraction/) and
 * writes its weights to src/memory/extraction/statement-model.json (a data file, committed) and their SHA-256
 * to statement-model.sha256.ts beside it (model-file.ts); the service checks the one against the other when it
 * loads them (statement-model-file.ts).
 *
 * Data: training/memory/*.jsonl, user turns labelled with the facts they state (kind and the words
 * that carry the value) or none, written for training only; bench:memory's set (bench/memory/turns.jsonl)
 * is another one and is never read here. Each turn is cut into statements as the product cuts it; a statement
 * is labelled with the kind of the fact whose words it holds, `none` in a turn that states nothing, and left
 * out when its turn states something it does not hold (a piece of a longer fact).
 *
 * Two heads, one softmax regression each (Adam, L2, full batch): MiniLM's embedding of the third-person text
 * beside the hashed word features (the default), and the word features alone (a server whose embedder is
 * another model). Five-fold cross-validation on turns picks the threshold on P(none) (the lowest false-fact
 * rate at which recall holds) and prints what the held-out folds scored.
 *
 * Deterministic: fixed fold assignment and initialisation; embedding with MiniLM is deterministic.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HASH_DIMS, lexicalFeatures, STATEMENT_CLASSES, statementsOf, thirdPerson } from '../../src/memory/index.js';
import { defaultEmbeddingModelPath, LocalEmbedder } from '../../src/retrieval/index.js';
import { writeStatementModel } from './model-file.js';
import { type Network, predict, type Sample, type Shape, train } from './network.js';

interface Turn {
  id: string;
  say: string;
  facts: Array<{ kind: string; expect: string[] }>;
  before?: string[];
}

interface Example extends Sample {
  turn: number;
  text: string;
}

const ROOT = join(import.meta.dirname, '..', '..');
const TRAINING = join(ROOT, 'training', 'memory');
const FOLDS = 5;
const setting = (name: string, fallback: number) => Number(process.env[`TRAIN_${name}`] ?? fallback);
const SETTINGS = { epochs: setting('EPOCHS', 500), l2: setting('L2', 3e-5), rate: setting('RATE', 0.05) };
const HIDDEN = setting('HIDDEN', 0);
/** The held-out false-fact rate (none statements taken for facts) the threshold is chosen for. */
const TARGET_FALSE_RATE = setting('FALSE_RATE', 0.03);
const DRY = process.argv.includes('--dry');

function readTurns(): Turn[] {
  return readdirSync(TRAINING)
    .filter((f) => f.endsWith('.jsonl'))
    .sort()
    .flatMap((f) =>
      readFileSync(join(TRAINING, f), 'utf8')
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l) as Turn),
    );
}

const holds = (text: string, expect: readonly string[]) =>
  expect.every((e) => text.toLowerCase().includes(e.toLowerCase()));

/** The turn's statements, labelled; a turn's earlier facts (`before`) are examples of their own. */
function examplesOf(turns: readonly Turn[]): Example[] {
  const out: Example[] = [];
  let unplaced = 0;
  turns.forEach((turn, t) => {
    const said = [...(turn.before ?? []).map((b) => ({ say: b, facts: undefined })), turn];
    for (const { say, facts } of said) {
      const { statements } = statementsOf(say);
      const placed = new Set<number>();
      for (const s of statements) {
        const text = thirdPerson(s.text);
        const f = facts?.findIndex((fact) => holds(s.raw, fact.expect)) ?? -1;
        let label: number;
        if (facts === undefined)
          label = -2; // an earlier turn: a fact of an unknown kind, left out below
        else if (f >= 0) label = STATEMENT_CLASSES.indexOf(facts[f]?.kind as never);
        else label = facts.length === 0 ? 0 : -1;
        if (f >= 0) placed.add(f);
        if (label < 0) continue;
        const words = lexicalFeatures(s.raw);
        out.push({ turn: t, label, weight: 1, indices: words.indices, value: words.value, text });
      }
      for (let f = 0; f < (facts?.length ?? 0); f++) if (!placed.has(f)) unplaced++;
    }
  });
  console.log(`statements: ${out.length}; facts no single statement holds (cut apart or not a candidate): ${unplaced}`);
  return out;
}

/** Held-out P(none) and best kind of every example, by five folds over turns. */
function crossValidate(examples: readonly Example[], shape: Shape) {
  const held: Array<{ e: Example; pNone: number; kind: number }> = [];
  for (let fold = 0; fold < FOLDS; fold++) {
    const inFold = (e: Example) => e.turn % FOLDS === fold;
    const model = train(
      examples.filter((e) => !inFold(e)),
      shape,
      SETTINGS,
    );
    for (const e of examples.filter(inFold)) {
      const p = predict(model, e);
      let kind = 1;
      for (let c = 2; c < p.length; c++) if ((p[c] ?? 0) > (p[kind] ?? 0)) kind = c;
      held.push({ e, pNone: p[0] ?? 1, kind });
    }
  }
  return held;
}

/** The highest threshold whose held-out false-fact rate stays within the target, and what it scores. */
function chooseThreshold(held: ReturnType<typeof crossValidate>) {
  const nones = held.filter((h) => h.e.label === 0);
  const facts = held.filter((h) => h.e.label > 0);
  let best = { threshold: 0.5, recall: 0, falseRate: 1, kindAccuracy: 0 };
  for (let t = 0.05; t <= 0.951; t += 0.01) {
    const falseRate = nones.filter((h) => h.pNone < t).length / Math.max(1, nones.length);
    const kept = facts.filter((h) => h.pNone < t);
    const recall = kept.length / Math.max(1, facts.length);
    if (falseRate <= TARGET_FALSE_RATE && recall >= best.recall) {
      const kindAccuracy = kept.filter((h) => h.kind === h.e.label).length / Math.max(1, kept.length);
      best = { threshold: Number(t.toFixed(2)), recall, falseRate, kindAccuracy };
    }
  }
  return best;
}

/** A layer as stored: int8 weights, one base64 string per output row, with each row's scale. */
function quantise(layer: Network['layers'][number]) {
  const scales: number[] = [];
  const rows: string[] = [];
  for (let o = 0; o < layer.outputs; o++) {
    let max = 0;
    for (let i = 0; i < layer.inputs; i++) max = Math.max(max, Math.abs(layer.weights[o * layer.inputs + i] ?? 0));
    const scale = max / 127 || 1;
    scales.push(Number(scale.toPrecision(6)));
    const row = new Int8Array(layer.inputs);
    for (let i = 0; i < layer.inputs; i++) row[i] = Math.round((layer.weights[o * layer.inputs + i] ?? 0) / scale);
    rows.push(Buffer.from(row.buffer).toString('base64'));
  }
  return {
    inputs: layer.inputs,
    outputs: layer.outputs,
    bias: [...layer.bias].map((v) => Number(v.toPrecision(6))),
    scales,
    weights: rows,
  };
}

async function main(): Promise<void> {
  const turns = readTurns();
  const examples = examplesOf(turns);
  const embedder = new LocalEmbedder({
    modelPath: process.env.PVAI_EMBEDDING_MODEL ?? defaultEmbeddingModelPath(join(ROOT, 'data')),
  });
  const dimension = await embedder.dimension();
  const started = performance.now();
  for (let i = 0; i < examples.length; i += 32) {
    const batch = examples.slice(i, i + 32);
    const vectors = await embedder.embed(batch.map((e) => e.text));
    batch.forEach((e, j) => {
      e.vector = vectors[j];
    });
  }
  console.log(`embedded ${examples.length} statements in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  await embedder.close();
  const counts = STATEMENT_CLASSES.map((c, i) => `${c} ${examples.filter((e) => e.label === i).length}`);
  console.log(`turns: ${turns.length}; statements by class: ${counts.join(', ')}`);

  const heads: Record<string, unknown> = {};
  for (const [name, dim] of [
    ['embeddingAndWords', dimension],
    ['words', 0],
  ] as const) {
    if (process.env.TRAIN_HEAD && process.env.TRAIN_HEAD !== name) continue;
    const shape = { dense: dim, sparse: HASH_DIMS, hidden: HIDDEN, classes: STATEMENT_CLASSES.length };
    const held = crossValidate(examples, shape);
    const choice = chooseThreshold(held);
    if (process.env.TRAIN_SHOW) {
      for (const h of held) {
        const wrong = h.e.label === 0 ? h.pNone < choice.threshold : h.pNone >= choice.threshold;
        if (wrong)
          console.log(
            `${h.e.label === 0 ? 'FALSE' : 'MISS '} ${h.pNone.toFixed(2)} ${STATEMENT_CLASSES[h.e.label]} ${h.e.text}`,
          );
      }
    }
    console.log(
      `${name}: held-out recall ${(choice.recall * 100).toFixed(1)} %, false facts ${(choice.falseRate * 100).toFixed(1)} %, kind right ${(choice.kindAccuracy * 100).toFixed(1)} % at P(none) < ${choice.threshold}`,
    );
    const model = train(examples, shape, SETTINGS);
    heads[name] = {
      ...(dim > 0 ? { embedder: embedder.id } : {}),
      dimension: dim,
      hashDims: HASH_DIMS,
      classes: STATEMENT_CLASSES,
      layers: model.layers.map(quantise),
      noneThreshold: choice.threshold,
      heldOut: {
        recall: Number(choice.recall.toFixed(4)),
        falseFacts: Number(choice.falseRate.toFixed(4)),
        kindAccuracy: Number(choice.kindAccuracy.toFixed(4)),
      },
    };
  }
  if (DRY) return;
  // A run limited to one head (TRAIN_HEAD) is a look at it, not a model the service can load.
  if (Object.keys(heads).length < 2) return console.log('one head trained (TRAIN_HEAD): nothing written');
  const { path, sha256 } = writeStatementModel(ROOT, { turns: turns.length, heads });
  console.log(`wrote ${path}\nSHA-256 ${sha256} (recorded in statement-model.sha256.ts)`);
}

await main();
