/**
 * The test suite's mock OpenAI upstream in a process of its own, so benchmarks measure the caller and
 * not a load generator sharing the mock's event loop. Prints its base URL (…/v1) on stdout.
 * Model "slow-stream" streams 20 chunks 2 ms apart (for time-to-first-token and inter-chunk gaps).
 */
import { startMockUpstream } from '../test/support/mock-openai-upstream.js';

const upstream = await startMockUpstream({ record: false });
upstream.scriptModel('slow-stream', {
  kind: 'slow',
  chunks: Array.from({ length: 20 }, (_, i) => `word${i} `),
  delayMs: 2,
});
process.stdout.write(`${upstream.url}\n`);
process.on('SIGTERM', () => {
  void upstream.close().then(() => process.exit(0));
});
