// Builds the server into dist/ (or the folder given as the first argument): `npm run build:server`.
//
// src/ is bundled by esbuild into a few ES modules: the CLI's entry (dist/cli.js, what
// bin/plainbase.js runs), the webhook worker's (dist/worker/delivery-worker.js, loaded only by a
// process that runs a worker) and shared chunks, one for each module loaded later with import().
// TypeBox, Kysely, Zod and csv-parse, which ship as hundreds of small ES modules each, go into the
// bundle too: Node 20 spends time and memory on every module it loads, and these four alone were
// about 750 of the ~1,000 files a start loaded (docs/performance.md, "Start-up and memory").
// Every other package stays in node_modules, imported as it is: native addons, packages that find
// files of their own next to their code, and the ones loaded only when needed (PostgreSQL, S3,
// Redis, the webhook HTTP client), which a start must not load.
//
// The build goes to a folder beside the output first and takes its place whole at the end: a
// server running from dist/ while someone builds again never finds it missing or half-written,
// and a build that fails leaves the old one as it was.
//
// Types are not checked here (esbuild only removes them): `npm run typecheck` does that.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BUNDLED_PACKAGES = /^(typebox|kysely|zod|csv-parse)(\/|$)/;

const outdir = path.resolve(ROOT, process.argv[2] ?? 'dist');
const staging = path.join(path.dirname(outdir), `.${path.basename(outdir)}-${process.pid}-${Date.now()}`);

try {
  await build(staging);
  const old = `${staging}-old`;
  if (fs.existsSync(outdir)) fs.renameSync(outdir, old);
  fs.renameSync(staging, outdir);
  fs.rmSync(old, { recursive: true, force: true });
} finally {
  fs.rmSync(staging, { recursive: true, force: true });
}

async function build(into) {
  await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: ['src/cli.ts', 'src/worker/delivery-worker.ts'],
    outdir: into,
    outbase: 'src',
    entryNames: '[dir]/[name]',
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    tsconfig: 'tsconfig.json',
    sourcemap: true,
    logLevel: 'warning',
    plugins: [
      {
        name: 'packages-stay-in-node-modules',
        setup(build) {
          build.onResolve({ filter: /^[^./]/ }, (args) => (BUNDLED_PACKAGES.test(args.path) ? undefined : { path: args.path, external: true }));
        },
      },
    ],
  });
}
