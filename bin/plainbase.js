#!/usr/bin/env node
// The CLI is written in TypeScript; tsx compiles it on load so no build step stands between
// `npm ci` and a running service.
import { register } from 'tsx/esm/api';

register();
try {
  await import('../src/cli.ts');
} catch (error) {
  // A module that does not load is a broken install or checkout: say which, in one line.
  process.stderr.write(`plainbase: cannot load the program: ${String(error?.message ?? error).split('\n')[0]}\n`);
  process.exit(1);
}
