import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { builtinModules } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { build, type Plugin } from 'esbuild';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { SDK } from './support/build-sdk.js';

/**
 * The built package as a web app's bundler sees it: esbuild for the browser, minified, resolving
 * `@plainbase/sdk` through the package's own exports (so the `browser` condition is what is
 * tested). Nothing of Node.js may be reached, not even a dynamic import a bundler leaves alone,
 * and the records client must stay small: under 10 kB minified and gzipped.
 */
const NODE_BUILTINS = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));
const RECORDS_CLIENT_LIMIT = 10 * 1024;

let app: string;

beforeAll(() => {
  const buildError = inject('sdkBuildError');
  if (buildError) throw new Error(`sdk/dist could not be built:\n${buildError}`);
  // An app with the package installed: node_modules/@plainbase/sdk is the sdk folder itself.
  app = mkdtempSync(path.join(os.tmpdir(), 'plainbase-sdk-bundle-'));
  mkdirSync(path.join(app, 'node_modules', '@plainbase'), { recursive: true });
  symlinkSync(SDK, path.join(app, 'node_modules', '@plainbase', 'sdk'), 'dir');
});

afterAll(() => {
  if (app) rmSync(app, { recursive: true, force: true });
});

interface Bundle {
  code: string;
  /** Minified and gzipped, in bytes. */
  gzipped: number;
  /** The files the bundler read, relative to sdk/. */
  inputs: string[];
  /** Those of them that left code in the bundle (the rest were shaken out). */
  kept: string[];
  /** Node.js modules something tried to import. */
  builtins: string[];
}

async function bundleForBrowser(source: string): Promise<Bundle> {
  const builtins: string[] = [];
  const refuseBuiltins: Plugin = {
    name: 'refuse-node-builtins',
    setup(build) {
      build.onResolve({ filter: /.*/ }, (args) => {
        if (!NODE_BUILTINS.has(args.path)) return undefined;
        builtins.push(`${args.path} (from ${args.importer})`);
        return { path: args.path, external: true };
      });
    },
  };
  const result = await build({
    stdin: { contents: source, resolveDir: app, loader: 'js' },
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    minify: true,
    write: false,
    metafile: true,
    preserveSymlinks: false,
    plugins: [refuseBuiltins],
    logLevel: 'silent',
  });
  const code = result.outputFiles[0]!.text;
  const relative = (inputs: string[]) => inputs.filter((input) => input !== '<stdin>').map((input) => path.relative(SDK, path.resolve(input)));
  const [output] = Object.values(result.metafile.outputs);
  const kept = Object.entries(output!.inputs).filter(([, use]) => use.bytesInOutput > 0).map(([input]) => input);
  return { code, gzipped: gzipSync(code, { level: 9 }).byteLength, inputs: relative(Object.keys(result.metafile.inputs)), kept: relative(kept), builtins };
}

function expectBrowserOnly(bundle: Bundle): void {
  expect(bundle.builtins).toEqual([]);
  // A dynamic import with a computed specifier is invisible to the resolver: the text tells
  // (`async import(` is the method records.import, not an import).
  expect(bundle.code).not.toMatch(/node:/);
  expect(bundle.code).not.toMatch(/(?<!async\s+|\.)\bimport\s*\(/);
  expect(bundle.inputs.every((input) => input.startsWith(`dist${path.sep}`)), bundle.inputs.join(', ')).toBe(true);
}

it('bundles the records client for the browser with nothing of Node.js, under 10 kB min+gzip', async () => {
  const bundle = await bundleForBrowser(`
    import { Plainbase, PlainbaseError } from '@plainbase/sdk';
    const pb = new Plainbase({ url: location.origin, key: 'pb_test_x' });
    export const leads = pb.collection('leads').records;
    export { PlainbaseError };
  `);
  expectBrowserOnly(bundle);
  expect(bundle.kept).toContain(path.join('dist', 'records.js'));
  // Unused parts are shaken out: the webhook verifier is no part of a records client.
  expect(bundle.kept.filter((input) => input.includes('webhook'))).toEqual([]);
  console.log(`records client for the browser: ${bundle.code.length} B minified, ${bundle.gzipped} B min+gzip (limit ${RECORDS_CLIENT_LIMIT} B)`);
  expect(bundle.gzipped).toBeGreaterThan(1000);
  expect(bundle.gzipped).toBeLessThan(RECORDS_CLIENT_LIMIT);
});

it('bundles the whole package for the browser, webhook verifier included, with nothing of Node.js', async () => {
  const bundle = await bundleForBrowser(`export * from '@plainbase/sdk';`);
  expectBrowserOnly(bundle);
  // The browser's verifier, not the one with the Node.js 18 fallback.
  expect(bundle.kept).toContain(path.join('dist', 'verify-webhook-browser.js'));
  expect(bundle.inputs).not.toContain(path.join('dist', 'verify-webhook.js'));
  console.log(`whole package for the browser: ${bundle.code.length} B minified, ${bundle.gzipped} B min+gzip`);
});

it('keeps the Node.js 18 fallback for every other runtime (the check above can fail)', async () => {
  const result = await build({
    stdin: { contents: `export * from '@plainbase/sdk';`, resolveDir: app, loader: 'js' },
    bundle: true,
    platform: 'neutral',
    format: 'esm',
    write: false,
    logLevel: 'silent',
  });
  expect(result.outputFiles[0]!.text).toMatch(/node:crypto/);
});
