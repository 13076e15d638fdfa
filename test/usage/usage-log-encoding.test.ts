import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { UsageRecord } from '../../src/usage/index.js';
import { logUsage, usageFromLog } from '../../src/usage/usage-log-encoding.js';

const record: UsageRecord = {
  accountId: 'acct_8Zq2',
  keyId: 'key_Vf3',
  requestId: 'req_5d1e0b4c9a7f4e2b8c6d0a1f3e5b7c9d',
  endpoint: 'createChatCompletion',
  model: 'PV-TURBO',
  userId: 'ada',
  status: 200,
  promptTokens: 12,
  completionTokens: 34,
  credits: 3,
  latencyMs: 1.4646059999,
  ttftMs: 0.9,
  cached: false,
  createdAt: 1_795_854_394_952,
};

describe("usage rows in the staging log (the embedded server's write behind)", () => {
  it('reads back every value the usage tables store, the latency rounded as they store it', () => {
    const back = usageFromLog(JSON.parse(JSON.stringify(logUsage(record))));
    const { ttftMs: _ttft, ...stored } = record;
    assert.deepEqual(back, { ...stored, latencyMs: 1 });
    const bare = usageFromLog(
      JSON.parse(JSON.stringify(logUsage({ ...record, keyId: null, model: null, userId: undefined, cached: true }))),
    );
    assert.deepEqual([bare.keyId, bare.model, bare.userId, bare.cached], [null, null, null, true]);
  });

  it('takes less than half the bytes the record object took, and reads rows logged as objects as they were', () => {
    const objectJson = JSON.stringify(record);
    const rowJson = JSON.stringify(logUsage(record));
    assert.ok(rowJson.length * 2 < objectJson.length, `${rowJson.length} bytes against ${objectJson.length}`);
    assert.deepEqual(usageFromLog(JSON.parse(objectJson)), record);
  });
});
