import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Why sdk/dist could not be built for this run; null when it was (or was fresh). */
    sdkBuildError: string | null;
  }
}

/**
 * Vitest global setup: makes sure sdk/dist holds a build of the current SDK sources (sdk's own
 * `npm run build`) before any test runs, building only when a source is newer than the build.
 * A build that fails does not stop the tests that have nothing to do with the package: its error
 * is handed to the tests of the package (test/sdk-package.test.ts), which fail with it.
 */
export const SDK = fileURLToPath(new URL('../../sdk/', import.meta.url));
const SOURCES = ['src', 'tsconfig.json', 'package.json', 'scripts/build.mjs'].map((name) => path.join(SDK, name));

function newestChange(entry: string): number {
  const info = fs.statSync(entry, { throwIfNoEntry: false });
  if (!info) return 0;
  if (!info.isDirectory()) return info.mtimeMs;
  return Math.max(info.mtimeMs, ...fs.readdirSync(entry).map((name) => newestChange(path.join(entry, name))));
}

export function sdkIsFresh(): boolean {
  const built = fs.statSync(path.join(SDK, 'dist', 'index.js'), { throwIfNoEntry: false });
  return built !== undefined && built.mtimeMs >= Math.max(...SOURCES.map(newestChange));
}

export default function setup(project: TestProject): void {
  if (sdkIsFresh()) {
    project.provide('sdkBuildError', null);
    return;
  }
  const result = spawnSync(process.execPath, [path.join(SDK, 'scripts', 'build.mjs')], { cwd: SDK, encoding: 'utf8' });
  const failed = result.status !== 0;
  if (failed) process.stderr.write(`\n*** sdk/dist could not be built; the package's tests will fail:\n${result.stdout}${result.stderr}\n`);
  project.provide('sdkBuildError', failed ? `${result.stdout}${result.stderr}`.trim() || `exit ${result.status}` : null);
}
