import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { describe, it } from 'node:test';

/**
 * The documents a newcomer reads first stay short enough to read and say only what is true of this tree.
 * Bounds, in characters:
 * - README.md 12,000: what pvai is, its two commands, first requests and where to go next; the configuration
 *   reference and the framework recipes are docs/configuration.md and docs/recipes.md.
 * - docs/benchmarks.md 40,000: each bench's command, target and current table; how the numbers got there is
 *   in git, not in the document.
 * - docs/architecture.md 30,000: the map (~11,000), the per-request budget (~1,400) and the "where each rule
 *   lives" table (~13,000, a row of ~150 characters a rule): a newcomer reads it in one sitting;
 *   a new rule replaces words, not adds a journal of how the numbers were reached.
 * Every repository path those documents name in backticks exists: a path that looks like one (it holds a `/`
 * or ends in a source or document extension) is read from the repository's root or from `src/`, and a bare file
 * name must be some file's name under the folders listed in SEARCHED. What is not a path of this repository
 * (URLs, media types, places made at run time, outside the clone) is listed in NOT_REPOSITORY_PATHS.
 */
const ROOT = resolve(import.meta.dirname, '../..');

const BOUNDS: Record<string, number> = {
  'README.md': 12_000,
  'docs/benchmarks.md': 40_000,
  'docs/architecture.md': 30_000,
};
const CHECKED = [...Object.keys(BOUNDS), 'docs/configuration.md', 'docs/recipes.md'];

/** A backticked name is taken for a path when it has a `/` or ends in one of these. */
const PATH_LIKE = /\/|\.(?:ts|md|json|jsonl|mjs|cjs|js|py|sh|yaml|wat)$/;

/** Named in backticks and not paths of this repository, each with why. */
const NOT_REPOSITORY_PATHS: Array<[RegExp, string]> = [
  [/:\/\//, 'a URL, or a value holding one (`["https://app.example.com"]`)'],
  [/^\d+\.\d+\.\d+\.\d+\/\d+$/, 'an address block (10.1.0.0/16)'],
  [/^\//, 'an absolute path: a route of the API (/z1/…) or of the machine (/usr/bin/python3)'],
  [/^\.\.\//, 'beside the clone (../shared/…), never in it'],
  [/[<>*{}$…]/, 'a placeholder or a glob (<dataDir>/pending/usage.jsonl, *.gguf)'],
  [/^@/, 'an npm package scope (@ai-sdk/openai)'],
  [/^(?:text|application|multipart|image)\/[a-z.+-]+$/, 'a media type'],
  [/^(?:dist|data|bench-output|test-output|\.tools|node_modules)(?:\/|$)/, 'made by a build, the set-up or a run'],
  [/^generated\/(?:typescript\/dist)(?:\/|$)/, 'made by a build'],
  [/^qdrant\/bm25$/, "Qdrant's built-in BM25 model, by its name"],
  [/^npm\/cli#/, 'an issue of npm'],
];

/** Where a bare file name (`compose.ts`) may be found. */
const SEARCHED = ['src', 'scripts', 'bench', 'test', 'docs', 'openapi', '.ci'];

function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : files(path);
    return [path];
  });
}

const baseNames = new Set(SEARCHED.flatMap((dir) => files(join(ROOT, dir))).map((path) => basename(path)));

/** The backticked spans of a Markdown text outside fenced blocks, one entry each time one is named. */
export function backticked(markdown: string): string[] {
  const prose = markdown.replace(/^```[^\n]*\n[\s\S]*?^```[^\n]*$/gm, '');
  return [...prose.matchAll(/`([^`\n]+)`/g)].map((match) => match[1] ?? '');
}

/**
 * The repository paths a document names: its backticked names that are one word, path-like and not in the
 * allow-list, and anywhere in it, fenced blocks included, whatever starts with one of the top folders
 * (`src/planned/` in a layout drawn as a code block).
 */
export function namedPaths(markdown: string): string[] {
  const quoted = backticked(markdown)
    .map((name) => name.trim().replace(/[.,:;]$/, ''))
    .filter((name) => !/\s/.test(name) && PATH_LIKE.test(name));
  const anywhere = [
    ...markdown.matchAll(/(?<![\w./@-])(?:src|scripts|bench|test|docs|openapi|generated|\.ci)\/[\w./-]*/g),
  ]
    .map((match) => match[0].replace(/\.+$/, ''))
    .filter((name) => !quoted.includes(name));
  return [...quoted, ...anywhere].filter((name) => !NOT_REPOSITORY_PATHS.some(([pattern]) => pattern.test(name)));
}

function exists(name: string): boolean {
  const path = name.replace(/#.*$/, '').replace(/\/$/, '');
  if (existsSync(join(ROOT, path)) || existsSync(join(ROOT, 'src', path))) return true;
  return !path.includes('/') && baseNames.has(path);
}

function read(document: string): string {
  return readFileSync(join(ROOT, document), 'utf8');
}

describe('documents a newcomer reads', () => {
  for (const [document, bound] of Object.entries(BOUNDS)) {
    it(`${document} is at most ${bound.toLocaleString('en')} characters`, () => {
      const length = [...read(document)].length;
      assert.ok(length <= bound, `${document} has ${length.toLocaleString('en')} characters`);
    });
  }

  for (const document of CHECKED) {
    it(`every repository path ${document} names exists`, () => {
      const named = namedPaths(read(document));
      assert.ok(named.length > 0, `no path found in ${document}: the extraction is broken`);
      assert.deepEqual([...new Set(named.filter((name) => !exists(name)))], []);
    });
  }

  it("the README's layout names every folder of src/", () => {
    const readme = read('README.md');
    const folders = readdirSync(join(ROOT, 'src'), { withFileTypes: true }).filter((entry) => entry.isDirectory());
    assert.ok(folders.length > 10);
    assert.deepEqual(
      folders.map((entry) => `src/${entry.name}/`).filter((folder) => !readme.includes(`\`${folder}\``)),
      [],
    );
  });

  it('recognises a path that is gone, and leaves what is not a path alone', () => {
    const named = namedPaths(
      '`src/planned/` `src/chat/` `https://example.com/a.md` `<dataDir>/pending/usage.jsonl` `text/event-stream` ' +
        '`../shared/bin/README.md` `npm run bench:chat` `compose.ts`\n```\nsrc/fenced/\n```\n',
    );
    assert.deepEqual(named, ['src/planned/', 'src/chat/', 'compose.ts', 'src/fenced/']);
    assert.deepEqual(
      named.filter((name) => !exists(name)),
      ['src/planned/', 'src/fenced/'],
    );
  });
});
