// Compiles src/retrieval/sql/wasm/*.wat into a .ts module holding the bytes (base64), so the service needs no
// wasm toolchain at run or build time. Needs wabt, not a dependency: `npm i --no-save wabt` first.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import wabt from 'wabt';

const dir = join(import.meta.dirname, '..', 'src', 'retrieval', 'sql', 'wasm');
const tools = await wabt();
for (const file of readdirSync(dir).filter((f) => f.endsWith('.wat'))) {
  const module = tools.parseWat(file, readFileSync(join(dir, file), 'utf8'), { simd: true, relaxed_simd: true });
  module.validate();
  const { buffer } = module.toBinary({});
  const name = file.replace(/\.wat$/, '');
  writeFileSync(
    join(dir, `${name}.ts`),
    `// Generated from ${file} by scripts/build-wasm.mjs: do not edit.\n` +
      `export const WASM_BASE64 =\n  '${Buffer.from(buffer).toString('base64')}';\n`,
  );
  console.log(`${name}.ts: ${buffer.length} bytes`);
}
