import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, beforeEach, expect, inject, it } from 'vitest';
import { describeEachEngine } from './support/harness.js';
import { SDK } from './support/build-sdk.js';
import { startSdkWorld, type SdkWorld } from './support/sdk-world.js';

const run = promisify(execFile);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const [vector] = (JSON.parse(readFileSync(new URL('./fixtures/webhook-signatures.json', import.meta.url), 'utf8')) as {
  cases: { secret: string; timestamp: string; body: string; signature: string }[];
}).cases;

/**
 * What a user of the published package gets: `npm pack` of sdk/ (its prepack builds dist/), then
 * a fresh project elsewhere installs the tarball (offline: the package has no dependencies) and
 * uses it from plain JavaScript and from TypeScript, against a live server.
 */
let project: string;
let packed: { filename: string; files: { path: string }[] };

beforeAll(async () => {
  const buildError = inject('sdkBuildError');
  if (buildError) throw new Error(`sdk/dist could not be built:\n${buildError}`);
  project = mkdtempSync(path.join(os.tmpdir(), 'plainbase-sdk-user-'));
  const { stdout } = await run(npm, ['pack', '--json', '--pack-destination', project], { cwd: SDK });
  [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as (typeof packed)[];
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'fresh-project', private: true }));
  await run(npm, ['install', `./${packed.filename}`, '--offline', '--no-audit', '--no-fund'], { cwd: project });
}, 120_000);

afterAll(() => {
  if (project) rmSync(project, { recursive: true, force: true });
});

/** Runs a .mjs file in the fresh project with plain Node.js (no TypeScript, no loader); answers its JSON output. */
async function runScript(name: string, source: string, env: Record<string, string> = {}): Promise<any> {
  writeFileSync(path.join(project, name), source);
  const { stdout } = await run(process.execPath, [name], { cwd: project, env: { ...process.env, ...env }, timeout: 60_000 });
  return JSON.parse(stdout);
}

it('packs dist, the declarations, the README and the manifest, and no sources or scripts', () => {
  const paths = packed.files.map((file) => file.path).sort();
  expect(paths).toEqual(expect.arrayContaining(['README.md', 'package.json', 'dist/index.js', 'dist/index.d.ts', 'dist/browser.js', 'dist/browser.d.ts', 'dist/generated/openapi.d.ts', 'dist/verify-webhook.js', 'dist/verify-webhook-browser.js']));
  expect(paths.filter((file) => !file.startsWith('dist/') && !['README.md', 'package.json'].includes(file))).toEqual([]);
  const manifest = JSON.parse(readFileSync(path.join(project, 'node_modules/@plainbase/sdk/package.json'), 'utf8'));
  expect([manifest.dependencies, manifest.type]).toEqual([undefined, 'module']);
  // The main entry imports nothing of Node.js's own: it must load in browsers, Deno and Bun too.
  for (const file of paths.filter((p) => p.endsWith('.js'))) {
    // Comments may show Node.js usage; the code may not use it.
    const code = readFileSync(path.join(project, 'node_modules/@plainbase/sdk', file), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
    expect(code, file).not.toMatch(/from ['"](node:|fs|path|crypto|stream|buffer)['"]/);
    expect(code, file).not.toMatch(/\b(require\(|process\.|Buffer\.)/);
  }
});

it('verifies a webhook vector from plain JavaScript, also where WebCrypto is no global (as on Node.js 18)', async () => {
  const source = `
    if (process.env.HIDE_WEBCRYPTO) delete globalThis.crypto;
    const { verifyWebhook, PlainbaseError } = await import('@plainbase/sdk');
    const v = JSON.parse(process.env.VECTOR);
    const headers = { 'x-baas-timestamp': v.timestamp, 'x-baas-signature': v.signature };
    const now = Number(v.timestamp) * 1000;
    const event = await verifyWebhook(v.body, headers, v.secret, { now });
    const refused = await verifyWebhook(v.body + ' ', headers, v.secret, { now }).catch((e) => ({ plainbase: e instanceof PlainbaseError, reason: e.reason }));
    console.log(JSON.stringify({ globalCrypto: typeof globalThis.crypto, event, refused }));
  `;
  for (const hide of ['', '1']) {
    const out = await runScript('verify.mjs', source, { VECTOR: JSON.stringify(vector), HIDE_WEBCRYPTO: hide });
    expect(out).toEqual({ globalCrypto: hide ? 'undefined' : 'object', event: JSON.parse(vector!.body), refused: { plainbase: true, reason: 'invalid-signature' } });
  }
});

it('type-checks a TypeScript user of the package against its declarations, and refuses wrong calls', async () => {
  writeFileSync(path.join(project, 'use.mts'), `
    import { Plainbase, PlainbaseError, verifyWebhook, type PlainbaseRecord } from '@plainbase/sdk';
    interface Lead { name: string; n?: number }
    const pb = new Plainbase({ url: 'http://127.0.0.1:8080', key: 'pb_live_x' });
    const leads = pb.collection<Lead>('leads').records;
    export async function use(): Promise<void> {
      const rec: PlainbaseRecord<Lead> = await leads.create({ name: 'Ada' });
      for await (const r of leads.list({ filter: 'data.n >= 1', limit: 100 })) r.data.name.toUpperCase();
      await leads.update(rec.id, { n: null }, { ifMatch: rec.etag });
      const me = await pb.me();
      me.effectiveScopes.includes('records:read');
      const stream: ReadableStream<Uint8Array> = await leads.export({ format: 'csv' });
      void stream;
      const created = await pb.request('post', '/v1/collections', { body: { name: 'notes' } });
      created.public.valueOf();
      const receipt = await new Plainbase({ url: 'https://data.example.com' }).submissions<Lead>('col_x').submit({ name: 'Ada' }, { captchaToken: 't' });
      receipt.revision.toFixed();
      // @ts-expect-error: a submission's answer holds no data
      receipt.data;
      const event = await verifyWebhook('{}', new Headers(), 'whsec_x', { now: Date.now() });
      event.type.toString();
      try { await pb.me(); } catch (error) { if (error instanceof PlainbaseError) error.requestId?.toString(); }
      // @ts-expect-error: data must be a Lead
      await leads.create({ title: 'no name' });
      // @ts-expect-error: no such route
      await pb.request('get', '/v1/nothing');
      // @ts-expect-error: this route needs its path parameter
      await pb.request('get', '/v1/collections/{col}', {});
      // @ts-expect-error: export formats are ndjson and csv
      await leads.export({ format: 'xml' });
    }
  `);
  writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, lib: ['ES2022', 'DOM', 'DOM.Iterable'], types: [] },
    files: ['use.mts'],
  }));
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const result = await run(process.execPath, [tsc, '-p', project], { cwd: project }).catch((error: { stdout: string }) => ({ stdout: error.stdout, failed: true }));
  expect(result.stdout).toBe('');
});

describeEachEngine('the packed SDK against a live server', (engine) => {
  let w: SdkWorld;
  beforeEach(async () => {
    w = await startSdkWorld(engine);
    expect((await w.main.owner.post('/v1/collections', { name: 'leads' })).status).toBe(201);
  });
  afterEach(async () => {
    await w?.close();
  });

  it('runs the entry points of its README from a plain .mjs file', async () => {
    // One workspace and one client: what is tested is that the installed package works at all.
    const out = await runScript('readme.mjs', `
      import { Plainbase, PlainbaseError, verifyWebhook } from '@plainbase/sdk';
      const pb = new Plainbase({ url: process.env.PLAINBASE_URL, key: process.env.PLAINBASE_KEY });
      const rec = await pb.collection('leads').records.create({ name: 'Ada', n: 0 });
      for (let n = 1; n <= 130; n += 10) {
        await Promise.all(Array.from({ length: 10 }, (_, i) => pb.collection('leads').records.create({ name: 'lead', n: n + i })));
      }
      let seen = 0;
      for await (const r of pb.collection('leads').records.list({ filter: 'data.n >= 1', limit: 100 })) seen += r.data.n >= 1 ? 1 : 0;
      const me = await pb.me();
      const error = await pb.collection('leads').records.get('rec_00000000000000000000000000').catch((e) => e);
      console.log(JSON.stringify({ rec, etag: rec.etag, seen, me, error: { plainbase: error instanceof PlainbaseError, code: error.code, status: error.status, requestId: error.requestId }, verify: typeof verifyWebhook }));
    `, { PLAINBASE_URL: w.base, PLAINBASE_KEY: await w.main.key(['records:read', 'records:create']) });

    expect(out.rec).toMatchObject({ id: expect.stringMatching(/^rec_/), data: { name: 'Ada', n: 0 }, trashedAt: null });
    expect(out.etag).toBe('"1"');
    expect(out.seen).toBe(130);
    expect(out.me).toMatchObject({ workspaceId: w.main.id, effectiveScopes: ['records:read', 'records:create'] });
    expect(out.error).toEqual({ plainbase: true, code: 'NOT_FOUND', status: 404, requestId: expect.stringMatching(/^req_/) });
    expect(out.verify).toBe('function');
  });
});
