import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Vitest global setup: the tests that start the service as a child process run `bin/plainbase.js`,
 * which runs the build in dist/, as a person's `npm start` does. So before any test runs, dist/
 * must hold a build of the current sources: this compiles src/ again (tsc -p tsconfig.build.json,
 * what `npm run build:server` runs) when any source is newer than its compiled file. The tests in
 * this process import the TypeScript sources themselves and need no build.
 *
 * The new build goes to a folder beside dist/ and takes its place at the end, so a build that
 * fails half-way never leaves a half-built dist/ behind.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SRC = path.join(ROOT, 'src');
const DIST = path.join(ROOT, 'dist');

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(full);
    else if (entry.name.endsWith('.ts')) yield full;
  }
}

/** Whether every file of src/ has its compiled file in dist/, at least as new as itself. */
export function serverBuildIsFresh(): boolean {
  for (const source of sourceFiles(SRC)) {
    const compiled = path.join(DIST, path.relative(SRC, source)).replace(/\.ts$/, '.js');
    const built = fs.statSync(compiled, { throwIfNoEntry: false });
    if (!built || built.mtimeMs < fs.statSync(source).mtimeMs) return false;
  }
  return true;
}

export default async function setup(): Promise<void> {
  if (serverBuildIsFresh()) return;
  const staging = path.join(ROOT, `.dist-${process.pid}-${Date.now()}`);
  try {
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    const { code, output } = await run(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json'), '--outDir', staging]);
    // 2: type errors, the JavaScript written all the same. Vitest does not check types either, so
    // a type error mid-edit must not stop the run; `npm run typecheck` is where it fails.
    if (code === 2) process.stderr.write(`\n*** src/ has type errors (npm run typecheck); the build in dist/ was made anyway ***\n\n`);
    else if (code !== 0) throw new Error(`the server did not build (tsc exit ${code}):\n${output}`);
    const old = `${staging}-old`;
    if (fs.existsSync(DIST)) fs.renameSync(DIST, old);
    fs.renameSync(staging, DIST);
    fs.rmSync(old, { recursive: true, force: true });
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

function run(command: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}
