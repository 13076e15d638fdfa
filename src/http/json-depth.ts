/**
 * The nesting depth of JSON text, measured on the text before it is parsed, in one pass with no
 * recursion: a body nested thousands of levels deep is refused here instead of reaching code that
 * walks it recursively (the cache key, JSON.stringify for an upstream, a grammar builder) and overflows
 * the stack there.
 *
 * Depth counts containers: `{}` is depth 1, `{"a":[1]}` depth 2. Strings are skipped whole (a bracket
 * inside a string does not count). The scan does not check the syntax: the parser that runs after it
 * does; on text that is not JSON the result only says how deep its brackets go.
 */

const OPEN_OBJECT = 0x7b; // {
const CLOSE_OBJECT = 0x7d; // }
const OPEN_ARRAY = 0x5b; // [
const CLOSE_ARRAY = 0x5d; // ]
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \
const COMMA = 0x2c; // ,

/** A key shown in a path is cut to this many characters: the path is for people, keys can be long. */
const MAX_KEY_CHARS = 32;

/** Where the first container past the limit is. */
export interface TooDeep {
  /** Its path, in the form the validation errors use: `tools[0].function.parameters.properties.a`. */
  path: string;
}

/** The first container nested deeper than `maxDepth`, or undefined when the text stays within it. */
export function findTooDeep(text: string, maxDepth: number): TooDeep | undefined {
  // Per open container: whether it is an array, its current index (arrays) or where its current key
  // starts and ends in the text (objects). Only read to name the path when the limit is passed.
  const isArray: boolean[] = [];
  const index: number[] = [];
  const keyStart: number[] = [];
  const keyEnd: number[] = [];
  let depth = 0;
  let expectKey = false;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (expectKey && depth > 0) {
        keyStart[depth - 1] = i;
        keyEnd[depth - 1] = end;
        expectKey = false;
      }
      i = end;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (depth === maxDepth) return { path: pathOf(text, depth, isArray, index, keyStart, keyEnd) };
      isArray[depth] = c === OPEN_ARRAY;
      index[depth] = 0;
      keyStart[depth] = -1;
      depth++;
      expectKey = c === OPEN_OBJECT;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (depth > 0) depth--;
      expectKey = false;
    } else if (c === COMMA && depth > 0) {
      if (isArray[depth - 1]) (index[depth - 1] as number)++;
      else expectKey = true;
    }
  }
  return undefined;
}

/** The index of the quote closing the string that opens at `start` (the text's end if it never closes). */
function stringEnd(text: string, start: number): number {
  let i = start;
  for (;;) {
    i = text.indexOf('"', i + 1);
    if (i === -1) return text.length;
    // Escaped when an odd number of backslashes precede it.
    let backslashes = 0;
    for (let j = i - 1; text.charCodeAt(j) === BACKSLASH; j--) backslashes++;
    if (backslashes % 2 === 0) return i;
  }
}

function pathOf(
  text: string,
  depth: number,
  isArray: readonly boolean[],
  index: readonly number[],
  keyStart: readonly number[],
  keyEnd: readonly number[],
): string {
  let path = '';
  for (let level = 0; level < depth; level++) {
    if (isArray[level]) {
      path += `[${index[level]}]`;
      continue;
    }
    const start = keyStart[level] ?? -1;
    const key = start === -1 ? '?' : keyText(text.slice(start, (keyEnd[level] ?? start) + 1));
    path += path === '' ? key : `.${key}`;
  }
  return path || 'body';
}

function keyText(quoted: string): string {
  let key: string;
  try {
    key = JSON.parse(quoted) as string;
  } catch {
    key = quoted.slice(1, -1);
  }
  return key.length > MAX_KEY_CHARS ? `${key.slice(0, MAX_KEY_CHARS)}…` : key;
}
