#!/usr/bin/env node
// Reads the Open Responses compliance suite's own JSON summary (`--json`, on stdin or a file) and holds pvai to the
// this bar: every case passes, except `image-input` on a text-only model, which must fail with pvai's 400
// UNSUPPORTED_CONTENT naming the image part (`input[0].content[1]`) — the part a text model cannot read, refused
// clearly instead of answered blind. Prints the suite's summary and a line per case; exits 1 otherwise.
//
//   node test/contract/openresponses-verdict.mjs result.json [--vision]
//
// `--vision`: the model reads images, so `image-input` must pass like the rest.
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const vision = args.includes('--vision');
const file = args.find((a) => !a.startsWith('--'));
const text = readFileSync(file ?? 0, 'utf8');
let report;
try {
  report = JSON.parse(text);
} catch {
  console.error(`openresponses: the suite printed no JSON summary:\n${text.slice(0, 2000)}`);
  process.exit(1);
}

const IMAGE_CASE = 'image-input';
const IMAGE_PART = 'input[0].content[1]';

/** Why the image case's failure is the expected refusal, or undefined when it is something else. */
function expectedImageRefusal(result) {
  const body = result.response;
  if (!body || typeof body !== 'object') return undefined;
  const field = body.details?.field;
  if (body.code === 'UNSUPPORTED_CONTENT' && field === IMAGE_PART && body.details?.part_type === 'input_image') {
    return `400 UNSUPPORTED_CONTENT naming ${field} (${body.details.part_type})`;
  }
  return undefined;
}

console.log(JSON.stringify({ summary: report.summary }, null, 2));
const problems = [];
for (const result of report.results ?? []) {
  const errors = (result.errors ?? []).join(' | ');
  if (result.status === 'passed') {
    if (result.id === IMAGE_CASE && !vision) {
      problems.push(`${IMAGE_CASE} passed on a text-only model: an image was answered without being read`);
    }
    console.log(`pass  ${result.id}`);
    continue;
  }
  if (result.id === IMAGE_CASE && !vision && result.status === 'failed') {
    const why = expectedImageRefusal(result);
    if (why) {
      console.log(`pass  ${result.id} (refused as expected on a text-only model: ${why})`);
      continue;
    }
  }
  problems.push(`${result.id}: ${result.status}${errors ? ` — ${errors}` : ''}`);
  console.log(`FAIL  ${result.id}: ${errors || result.status}`);
}
if ((report.results ?? []).length === 0) problems.push('the suite ran no case');
if (problems.length > 0) {
  console.error(`\nopenresponses: ${problems.length} case(s) below the bar:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`\nopenresponses: all ${report.results.length} cases at the bar`);
