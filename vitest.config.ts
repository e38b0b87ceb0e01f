import { defineConfig } from 'vitest/config';

/**
 * Files whose assertions measure time or memory, or that drive a child process to a deadline:
 * they run after the rest, one at a time, so that no other file is their load. Two files at a
 * time elsewhere cut the suite by about a third; with these among them, a create timed under
 * 100 ms beside a trickling import and the listen CLI's child failed in 2 of 8 full runs.
 */
const ALONE = [
  'test/cli-listen.test.ts',
  'test/fair-fan-out.test.ts',
  'test/hostile-input.property.test.ts',
  'test/idle-memory.test.ts',
  'test/import-spooling.test.ts',
  'test/schema-patterns.test.ts',
  'test/shutdown-stuck-log.test.ts',
  'test/webhook-tenancy.test.ts',
];

export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts', 'test/support/data-untouched.ts', 'test/support/tools-present.ts', 'test/support/build-server.ts', 'test/e2e/support/build-dashboard.ts', 'test/support/build-sdk.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The slowest files are printed after every run (test/support/slowest-files-reporter.ts).
    reporters: ['default', './test/support/slowest-files-reporter.ts'],
    projects: [
      {
        extends: true,
        // Two files at a time: the machine has two cores, and most files wait on databases and sockets.
        // isolate: false runs a worker's files one after another in the same process, importing the
        // app's modules once, not once per file (about 2 minutes of the suite); a test must not
        // count on module state (the id generator, caches) being fresh. The alone files keep a
        // process each: they measure the process itself.
        test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: ALONE, maxWorkers: 2, isolate: false, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: { name: 'alone', include: ALONE, maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
