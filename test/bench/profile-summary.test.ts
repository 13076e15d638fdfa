import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { diffProfiles, folderOf, frameKey, SOCKET_WRITE_FRAME } from '../../bench/profile-summary.js';

/** A CPU profile whose samples are `micros` spent in each native function named, one sample each. */
function profileOf(dir: string, name: string, micros: Record<string, number>): string {
  const names = Object.keys(micros);
  const nodes = [
    { id: 1, callFrame: { functionName: '(root)', url: '' }, children: names.map((_, i) => i + 2) },
    ...names.map((functionName, i) => ({ id: i + 2, callFrame: { functionName, url: '' } })),
  ];
  const path = join(dir, `${name}.cpuprofile`);
  writeFileSync(
    path,
    JSON.stringify({ nodes, samples: names.map((_, i) => i + 2), timeDeltas: Object.values(micros) }),
  );
  return path;
}

/** The `beyond µs` cell of a frame's row in one section of a diff (by folder or by function). */
function beyond(diff: string, by: 'folder' | 'function', frame: string): number | undefined {
  const at = diff.indexOf('Beyond the floor by function');
  const section = by === 'folder' ? diff.slice(0, at) : diff.slice(at);
  const row = section.split('\n').find((line) => line.startsWith(`| ${frame} `));
  return row === undefined ? undefined : Number(row.split('|')[4]);
}

describe('bench profile summary', () => {
  it('counts every native socket write as one frame, whatever form the body had', () => {
    for (const functionName of ['writev', 'writeUtf8String', 'writeBuffer', 'writeLatin1String']) {
      assert.equal(folderOf({ functionName, url: '' }), SOCKET_WRITE_FRAME);
      assert.equal(frameKey({ functionName, url: '' }), SOCKET_WRITE_FRAME);
    }
    // Other natives keep their own names; a JavaScript function called writev is not the socket's.
    assert.equal(folderOf({ functionName: 'oneShotDigest', url: '' }), '(native) oneShotDigest');
    assert.equal(
      frameKey({ functionName: 'writev', url: 'node:internal/fs/streams' }),
      'writev node:internal/fs/streams',
    );
  });

  it('finds no cost beyond the floor in socket writes the floor made as a string and pvai as a Buffer list', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pvai-profile-summary-'));
    // Per request (one request each): the floor writes its answer as a string, pvai as a Buffer list; both
    // also write the upstream request. pvai's one real extra cost is its digest.
    const floor = profileOf(dir, 'floor', { writeUtf8String: 28, writev: 12 });
    const pvai = profileOf(dir, 'pvai', { writev: 40, oneShotDigest: 2 });
    const diff = diffProfiles({ path: floor, requests: 1 }, { path: pvai, requests: 1 });
    for (const by of ['folder', 'function'] as const) assert.equal(beyond(diff, by, SOCKET_WRITE_FRAME), 0);
    assert.equal(beyond(diff, 'folder', '(native) oneShotDigest'), 2);
    assert.equal(beyond(diff, 'function', 'oneShotDigest'), 2);
  });
});
