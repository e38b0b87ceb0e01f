// Builds dist/ from src/ with the TypeScript compiler of the repository's install. Plain
// JavaScript, so that it runs before anything else is compiled (npm pack's prepack, the tests'
// global setup). dist/ is emptied first: a source file removed must not live on in the package.
// With --if-stale it does nothing while dist/ is newer than every source, so that a build already
// made (by the tests' setup) is not torn down under a test reading it.
import { spawnSync } from 'node:child_process';
import { readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const sources = ['src', 'tsconfig.json', 'package.json', 'scripts/build.mjs'].map((name) => path.join(root, name));

/** The latest change under a path; a folder counts itself too, so a removed file counts. */
function newestChange(entry) {
  const info = statSync(entry, { throwIfNoEntry: false });
  if (!info) return 0;
  if (!info.isDirectory()) return info.mtimeMs;
  return Math.max(info.mtimeMs, ...readdirSync(entry).map((name) => newestChange(path.join(entry, name))));
}

const built = statSync(path.join(root, 'dist', 'index.js'), { throwIfNoEntry: false });
if (process.argv.includes('--if-stale') && built && built.mtimeMs >= Math.max(...sources.map(newestChange))) process.exit(0);

rmSync(path.join(root, 'dist'), { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const result = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.json')], { stdio: 'inherit' });
process.exit(result.status ?? 1);
