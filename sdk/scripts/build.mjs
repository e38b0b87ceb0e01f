// Builds dist/ from src/ with the TypeScript compiler of the repository's install. Plain
// JavaScript, so that it runs before anything else is compiled (npm pack's prepack, the tests'
// global setup). dist/ is emptied first: a source file removed must not live on in the package.
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
rmSync(`${root}/dist`, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const result = spawnSync(process.execPath, [tsc, '-p', `${root}/tsconfig.json`], { stdio: 'inherit' });
process.exit(result.status ?? 1);
