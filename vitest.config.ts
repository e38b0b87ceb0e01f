import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts', 'test/support/build-server.ts', 'test/e2e/support/build-dashboard.ts', 'test/support/build-sdk.ts'],
    pool: 'forks',
    // Two files at a time even on two cores: many files spend much of their time waiting (on a
    // child process, a browser, a timer, PostgreSQL), and one worker left the second core idle.
    // Measured on this two-core machine: 594 s with one worker, 395 s with two.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    reporters: ['default'],
  },
});
