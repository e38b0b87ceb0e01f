import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import type { TestProject } from 'vitest/node';
import { CHROMIUM } from '../e2e/support/browser.js';

declare module 'vitest' {
  export interface ProvidedContext {
    chromiumPresent: boolean;
    redisServerPresent: boolean;
  }
}

function onPath(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Chromium (the dashboard's end-to-end tests, the SDK in a browser) and redis-server (the limits
 * counted in Redis) are programs of the machine, not packages. Like PostgreSQL (global-setup.ts):
 * in CI (CI=true) a missing one fails the run; locally its files are skipped, and said so.
 */
export default function setup(project: TestProject): void {
  const required = process.env.CI === 'true';
  const tools = [
    { key: 'chromiumPresent' as const, present: fs.existsSync(CHROMIUM), what: `Chromium (${CHROMIUM}; apt-get install chromium)`, files: 'test/e2e/* and test/sdk-browser.test.ts' },
    { key: 'redisServerPresent' as const, present: onPath('redis-server'), what: 'redis-server (apt-get install redis-server)', files: 'test/redis-limits.test.ts' },
  ];
  for (const tool of tools) {
    if (!tool.present) {
      if (required) throw new Error(`${tool.what} is missing; it is required here (CI=true).`);
      process.stderr.write(`\n*** ${tool.what} is missing: SKIPPING ${tool.files}. ***\n\n`);
    }
    project.provide(tool.key, tool.present);
  }
}
