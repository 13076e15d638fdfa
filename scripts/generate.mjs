#!/usr/bin/env node
// Generates from openapi/openapi.yaml: the server's operation types (openapi-typescript, generated/contract)
// and the TypeScript models and client (openapi-generator, generated/typescript).
//   node scripts/generate.mjs           regenerate generated/contract and generated/typescript
//   node scripts/generate.mjs --check   regenerate into a temp dir and fail on any difference (CI drift gate)
//   node scripts/generate.mjs --python DIR   generate the Python client into DIR (CI smoke test; not committed)
//   node scripts/generate.mjs --go DIR       generate the Go client into DIR, module pvai.local/generated/go-client,
//                                            package pvai (CI smoke test; not committed)
// The generator JAR comes from Maven Central through `mvn dependency:copy` into the wrapper's storage
// directory, where @openapitools/openapi-generator-cli finds it and makes no network call of its own.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const config = JSON.parse(readFileSync(join(root, 'openapitools.json'), 'utf8'))['generator-cli'];
const storageDir = join(root, config.storageDir);
const jar = join(storageDir, `${config.version}.jar`);
const spec = join(root, 'openapi/openapi.yaml');
const target = join(root, 'generated/typescript');
const contractTypes = join(root, 'generated/contract/schema.ts');

/** The types handlers implement, keyed by operationId (see src/http/operation.ts). */
function generateContractTypes(outFile) {
  // Defaults do not make request fields required: a client may leave out what has a default.
  execFileSync(
    join(root, 'node_modules/.bin/openapi-typescript'),
    [spec, '-o', outFile, '--default-non-nullable=false', '--silent'],
    {
      cwd: root,
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
}

function ensureJar() {
  if (existsSync(jar)) return;
  console.error(`openapi-generator ${config.version} JAR missing; fetching it from Maven Central with mvn`);
  execFileSync(
    'mvn',
    [
      '-q',
      'dependency:copy',
      `-Dartifact=org.openapitools:openapi-generator-cli:${config.version}`,
      `-DoutputDirectory=${storageDir}`,
    ],
    { stdio: 'inherit' },
  );
  renameSync(join(storageDir, `openapi-generator-cli-${config.version}.jar`), jar);
}

function generate(generator, outDir, props, extraArgs = []) {
  const bin = join(root, 'node_modules/.bin/openapi-generator-cli');
  execFileSync(
    bin,
    [
      'generate',
      ...extraArgs,
      '-i',
      spec,
      '-g',
      generator,
      '-o',
      outDir,
      '--global-property',
      'skipFormSchemas=true,skipFormModel=false',
      '--additional-properties',
      props,
      '--skip-validate-spec',
    ],
    { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] },
  );
}

const tsProps = 'supportsES6=true,importFileExtension=.js,npmName=pvai-client,enumPropertyNaming=original';

/**
 * The TypeScript client, whose default base path is the contract's first server: `/`, the server the client
 * came from. openapi-generator writes a relative server as `http://localhost` (port 80, wherever pvai runs);
 * the client keeps it relative, so in a page served by pvai it calls pvai, and elsewhere it is given
 * `basePath` as any SDK is given its server.
 */
function generateTypeScript(outDir) {
  generate('typescript-fetch', outDir, tsProps);
  const runtime = join(outDir, 'src', 'runtime.ts');
  const text = readFileSync(runtime, 'utf8');
  const relative = text.replace('export const BASE_PATH = "http://localhost".', 'export const BASE_PATH = "".');
  if (relative === text)
    throw new Error(`${runtime}: BASE_PATH is not the relative server any more; check the contract's servers`);
  writeFileSync(runtime, relative);
}

function diffTrees(a, b) {
  try {
    execFileSync('diff', ['-r', '-x', '.openapi-generator', '-x', 'dist', a, b], { stdio: 'inherit' });
    return true;
  } catch {
    return false;
  }
}

ensureJar();
const args = process.argv.slice(2);
if (args[0] === '--python') {
  const out = resolve(args[1] ?? join(tmpdir(), 'pvai-python-client'));
  generate('python', out, 'packageName=pvai_client,projectName=pvai-client');
  console.log(`Python client generated in ${out}`);
} else if (args[0] === '--go') {
  const out = resolve(args[1] ?? join(tmpdir(), 'pvai-go-client'));
  // The module path is a name for `replace` directives only: it is never fetched (see go-client-smoke/go.mod).
  const module = ['--git-host', 'pvai.local', '--git-user-id', 'generated', '--git-repo-id', 'go-client'];
  generate('go', out, 'packageName=pvai,isGoSubmodule=false', module);
  console.log(`Go client generated in ${out} (module pvai.local/generated/go-client)`);
} else if (args[0] === '--check') {
  const tmp = mkdtempSync(join(tmpdir(), 'pvai-gen-'));
  generateTypeScript(join(tmp, 'typescript'));
  generateContractTypes(join(tmp, 'schema.ts'));
  const same = diffTrees(target, join(tmp, 'typescript')) && diffTrees(contractTypes, join(tmp, 'schema.ts'));
  rmSync(tmp, { recursive: true, force: true });
  if (!same) {
    console.error('generated/ is out of date with openapi/openapi.yaml: run `npm run generate` and commit the result');
    process.exit(1);
  }
  console.log('generated/ matches openapi/openapi.yaml');
} else {
  rmSync(target, { recursive: true, force: true });
  generateTypeScript(target);
  generateContractTypes(contractTypes);
  console.log(`TypeScript models and client generated in ${target}, operation types in ${contractTypes}`);
}
