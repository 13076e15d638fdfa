/** Request bodies: valid JSON, mutated as JSON or corrupted as text, then encoded one way or another. */
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import type { Rng } from './random.js';
import type { Operation, Target } from './target.js';

function nested(levels: number, rng: Rng): string {
  const array = rng.chance(0.3);
  return array
    ? `${'['.repeat(levels)}${']'.repeat(levels)}`
    : `${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;
}

function randomJsonValue(rng: Rng): string {
  return rng.pick([
    'null',
    'true',
    '0',
    '-0',
    '1e400',
    '-1e-400',
    '9007199254740993',
    '3.14159',
    '""',
    JSON.stringify('x'.repeat(rng.int(1, 5000))),
    '"\\ud800"',
    '"\\u0000"',
    '[]',
    '{}',
    '[1,"a",null]',
    '{"__proto__":{"x":1}}',
    '{"constructor":{"prototype":{"x":1}}}',
    nested(rng.pick([10, 63, 64, 65, 300, 6000]), rng),
  ]);
}

/** A body's bytes: valid JSON, mutated as JSON, or corrupted as text. */
export function bodyBytes(op: Operation, rng: Rng, notes: string[]): Buffer {
  const text = bodyText(op, rng, notes);
  return typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
}

function bodyText(op: Operation, rng: Rng, notes: string[]): string | Buffer {
  const valid = op.body ? op.body() : { anything: 'at all' };
  const mutation = rng.weighted({
    none: 25,
    dropKey: 8,
    replaceValue: 20,
    addKey: 6,
    deep: 14,
    proto: 3,
    duplicateKey: 3,
    huge: 3,
    truncate: 6,
    garbage: 4,
    invalidUtf8: 3,
    notAnObject: 3,
    empty: 2,
  });
  notes.push(`body:${mutation}`);
  const keys = Object.keys(valid);
  const text = JSON.stringify(valid);
  const withValue = (key: string, value: string) => {
    const others = JSON.stringify(Object.fromEntries(Object.entries(valid).filter(([k]) => k !== key)));
    return `${others.slice(0, -1)}${others.length > 2 ? ',' : ''}${JSON.stringify(key)}:${value}}`;
  };
  switch (mutation) {
    case 'none':
      return text;
    case 'dropKey': {
      const key = rng.pick(keys);
      return JSON.stringify(Object.fromEntries(Object.entries(valid).filter(([k]) => k !== key)));
    }
    case 'replaceValue':
      return withValue(rng.pick(keys), randomJsonValue(rng));
    case 'addKey':
      return withValue(
        rng.pick(['extra', 'tools', 'response_format', 'metadata', 'stream', 'Model']),
        randomJsonValue(rng),
      );
    case 'deep': {
      const field = rng.pick(['tools', 'response_format', 'metadata', 'messages', ...keys]);
      const levels = rng.pick([32, 62, 63, 64, 65, 100, 1000, 6000, 20000]);
      notes.push(`depth:${levels}@${field}`);
      const inner = nested(levels, rng);
      if (field === 'tools') {
        return withValue('tools', `[{"type":"function","function":{"name":"f","parameters":${inner}}}]`);
      }
      if (field === 'response_format') return withValue(field, `{"type":"json_schema","json_schema":${inner}}`);
      return withValue(field, inner);
    }
    case 'proto':
      return `{"__proto__":{"polluted":true},${text.slice(1)}`;
    case 'duplicateKey':
      return `${text.slice(0, -1)},${JSON.stringify(rng.pick(keys))}:${randomJsonValue(rng)}}`;
    case 'huge':
      return withValue(rng.pick(keys), JSON.stringify('y'.repeat(rng.pick([100_000, 1_000_000, 1_100_000]))));
    case 'truncate':
      return text.slice(0, rng.int(0, Math.max(0, text.length - 1)));
    case 'garbage':
      return rng.bytes(rng.int(1, 200));
    case 'invalidUtf8':
      return Buffer.concat([Buffer.from(text.slice(0, -2)), Buffer.from([0xff, 0xfe, 0xc3, 0x28]), Buffer.from('"}')]);
    case 'notAnObject':
      return rng.pick(['"text"', '42', 'null', 'true', '   ', '\ufeff{}', '{} {}', '[]']);
    default:
      return '';
  }
}

/** The body's bytes, encoded one way or another, and the Content-Encoding header to send with them. */
export function encode(
  raw: Buffer,
  rng: Rng,
  target: Target,
  notes: string[],
): { bytes: Buffer; coding: string | undefined } {
  const how = rng.weighted({
    identity: 62,
    gzip: 7,
    deflate: 4,
    br: 4,
    garbage: 6,
    truncated: 4,
    mislabelled: 3,
    unsupported: 4,
    stacked: 2,
    zipBomb: 2,
    oddCase: 2,
  });
  notes.push(`encoding:${how}`);
  switch (how) {
    case 'identity':
      return { bytes: raw, coding: rng.chance(0.1) ? 'identity' : undefined };
    case 'gzip':
      return { bytes: gzipSync(raw), coding: rng.pick(['gzip', 'x-gzip']) };
    case 'deflate':
      return { bytes: deflateSync(raw), coding: 'deflate' };
    case 'br':
      return { bytes: brotliCompressSync(raw), coding: 'br' };
    case 'garbage':
      return { bytes: rng.bytes(rng.int(0, 300)), coding: rng.pick(['gzip', 'deflate', 'br']) };
    case 'truncated': {
      const full = gzipSync(raw);
      return { bytes: full.subarray(0, rng.int(1, Math.max(1, full.length - 1))), coding: 'gzip' };
    }
    case 'mislabelled':
      return { bytes: brotliCompressSync(raw), coding: rng.pick(['gzip', 'deflate']) };
    case 'unsupported':
      return { bytes: raw, coding: rng.pick(['zstd', 'compress', 'x-compress', 'gzip;q=1', 'chunked', '*', '']) };
    case 'stacked':
      return { bytes: gzipSync(gzipSync(raw)), coding: rng.pick(['gzip, gzip', 'gzip,gzip', 'br, gzip']) };
    case 'zipBomb':
      return { bytes: target.zipBomb, coding: 'gzip' };
    default:
      return { bytes: gzipSync(raw), coding: rng.pick(['GZIP', ' gzip ', 'Gzip\t']) };
  }
}
