#!/usr/bin/env node
// The CLI runs the JavaScript that `npm run build` bundled into dist/ (npm ci runs the build):
// nothing is compiled at start, so the service starts in about a second.
try {
  await import('../dist/cli.js');
} catch (error) {
  // A module that does not load is a missing build, or a broken install or checkout: say which, in one line.
  const notBuilt = error?.code === 'ERR_MODULE_NOT_FOUND' && String(error?.url ?? error?.message).includes('/dist/cli.js');
  const message = notBuilt
    ? 'the program is not built; run npm run build (npm ci builds it)'
    : `cannot load the program: ${String(error?.message ?? error).split('\n')[0]}`;
  process.stderr.write(`plainbase: ${message}\n`);
  process.exit(1);
}
