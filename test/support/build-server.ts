import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Vitest global setup: the tests that start the service as a child process run `bin/plainbase.js`,
 * which runs the build in dist/, as a person's `npm start` does. So before any test runs, dist/
 * must hold a build of the current sources: this builds again (scripts/build-server.mjs, what
 * `npm run build:server` runs) when any source, or the build script, is newer than the build.
 * The tests in this process import the TypeScript sources themselves and need no build.
 * The build script puts the new build in place whole, so a failed build leaves the old one.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SRC = path.join(ROOT, 'src');
const DIST = path.join(ROOT, 'dist');
const BUILD_SCRIPT = path.join(ROOT, 'scripts', 'build-server.mjs');

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(full);
    else if (entry.name.endsWith('.ts')) yield full;
  }
}

/** Whether dist/ holds a build at least as new as every file of src/ and the build script. */
export function serverBuildIsFresh(): boolean {
  const built = fs.statSync(path.join(DIST, 'cli.js'), { throwIfNoEntry: false });
  if (!built) return false;
  const inputs = [...sourceFiles(SRC), BUILD_SCRIPT];
  return inputs.every((input) => fs.statSync(input).mtimeMs <= built.mtimeMs);
}

/** Set once this run has a build: each project of vitest.config.ts runs this setup, the 'alone' one while the rest still run. */
const BUILT_THIS_RUN = 'PLAINBASE_TEST_SERVER_BUILT';

export default async function setup(): Promise<void> {
  // A second build would replace dist/ under the child processes of the files still running.
  if (process.env[BUILT_THIS_RUN] === '1') return;
  process.env[BUILT_THIS_RUN] = '1';
  if (serverBuildIsFresh()) return;
  process.stderr.write('test setup: dist/ is older than src/ (or missing): building the server\n');
  const { code, output } = await run(process.execPath, [BUILD_SCRIPT]);
  if (code !== 0) throw new Error(`the server did not build (exit ${code}):\n${output}`);
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
