import { spawnSync } from 'node:child_process';
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
 * Vitest global setup: makes sure sdk/dist holds a build of the current SDK sources before any
 * test runs (sdk/scripts/build.mjs --if-stale: it builds only when a source is newer). A build
 * that fails does not stop the tests that have nothing to do with the package: its error is
 * handed to the tests that use dist (test/sdk-package.test.ts, test/sdk-browser.test.ts).
 */
export const SDK = fileURLToPath(new URL('../../sdk/', import.meta.url));

export default function setup(project: TestProject): void {
  const result = spawnSync(process.execPath, [path.join(SDK, 'scripts', 'build.mjs'), '--if-stale'], { cwd: SDK, encoding: 'utf8' });
  const failed = result.status !== 0;
  if (failed) process.stderr.write(`\n*** sdk/dist could not be built; the package's tests will fail:\n${result.stdout}${result.stderr}\n`);
  project.provide('sdkBuildError', failed ? `${result.stdout}${result.stderr}`.trim() || `exit ${result.status}` : null);
}
