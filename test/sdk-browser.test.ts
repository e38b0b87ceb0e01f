import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchBrowser, releaseBrowser } from './e2e/support/browser.js';
import { SDK } from './support/build-sdk.js';
import { startSdkWorld, type SdkWorld } from './support/sdk-world.js';

const [vector] = (JSON.parse(readFileSync(new URL('./fixtures/webhook-signatures.json', import.meta.url), 'utf8')) as {
  cases: { secret: string; timestamp: string; body: string; signature: string }[];
}).cases;

/**
 * The built package in Chromium, loaded as ES modules from the service's own origin (the browser
 * asks for /__sdk/… and is answered from sdk/dist), as a bundled web app would run it. What is
 * tested is the browser's side: fetch, a File upload and a stream import sent the way browsers
 * must (no streamed request bodies over HTTP/1.1), WebCrypto. SQLite only: the server's storage is
 * covered on both engines by the other SDK tests, and one browser session is enough for this.
 */
describe.skipIf(!inject('chromiumPresent'))('the SDK in a browser (Chromium)', () => {
  let w: SdkWorld;
  let browser: Browser;
  beforeAll(async () => {
    const buildError = inject('sdkBuildError');
    if (buildError) throw new Error(`sdk/dist could not be built:\n${buildError}`);
    [w, browser] = await Promise.all([startSdkWorld('sqlite'), launchBrowser()]);
    expect((await w.main.owner.post('/v1/collections', { name: 'leads' })).status).toBe(201);
  }, 60_000);
  afterAll(async () => {
    await releaseBrowser(browser);
    await w?.close();
  });

  it('creates, lists, uploads with progress, imports a stream, exports, verifies a webhook and throws PlainbaseError', async () => {
    const page = await browser.newPage();
    await page.route('**/__sdk/**', (route) => {
      const name = new URL(route.request().url()).pathname.slice('/__sdk/'.length);
      if (name === 'page.html') return route.fulfill({ body: '<!doctype html><title>sdk</title>', contentType: 'text/html' });
      return route.fulfill({ path: path.join(SDK, 'dist', path.normalize(name)), contentType: 'text/javascript' });
    });
    await page.goto(`${w.base}/__sdk/page.html`);
    const key = await w.main.key(['records:read', 'records:create', 'files:read', 'files:write']);

    const out = (await page.evaluate(`(${inBrowser.toString().replace('globalThis.IMPORT_SDK', 'import')})(${JSON.stringify({ key, vector })})`)) as any;

    expect(out.created).toMatchObject({ data: { name: 'Ada' } });
    expect(out.etag).toBe('"1"');
    expect(out.file).toMatchObject({ name: 'hello.txt', contentType: 'text/plain', size: 20 });
    // A browser sends a File whole: progress says 0, then all of it.
    expect(out.uploadProgress).toEqual([{ bytes: 0, total: 20 }, { bytes: 20, total: 20 }]);
    expect(out.report).toEqual({ imported: 3, rejected: [], rejectedCount: 0 });
    // A stream is read into memory first (counted as it is read), then sent.
    expect(out.importProgress.at(-1)).toEqual({ bytes: 3 * '{"name":"s1"}\n'.length, total: null });
    expect(out.names).toEqual(['Ada', 's1', 's2', 's3']);
    expect(out.exportedLines).toBe(4);
    expect(out.downloaded).toBe('hello from a browser');
    expect(out.event).toEqual(JSON.parse(vector!.body));
    expect(out.error).toEqual({ plainbase: true, code: 'NOT_FOUND', status: 404 });
  });
});

/**
 * Runs in the page: the SDK as a browser app uses it. It reaches the page as text, with
 * `IMPORT_SDK` turned into `import`, so that the test runner's own rewriting of import() stays out.
 */
async function inBrowser({ key, vector }: { key: string; vector: { secret: string; timestamp: string; body: string; signature: string } }) {
  const { Plainbase, PlainbaseError, verifyWebhook } = await (globalThis as any).IMPORT_SDK(`${location.origin}/__sdk/browser.js`);
  const pb = new Plainbase({ url: location.origin, key });
  const leads = pb.collection('leads').records;
  const created = await leads.create({ name: 'Ada' });
  const uploadProgress: unknown[] = [];
  const file = await pb.collection('leads').files.upload(new File(['hello from a browser'], 'hello.txt', { type: 'text/plain' }), {
    onProgress: (p: unknown) => uploadProgress.push(p),
  });
  const importProgress: { bytes: number }[] = [];
  const stream = new ReadableStream({
    start(controller) {
      for (const name of ['s1', 's2', 's3']) controller.enqueue(new TextEncoder().encode(`{"name":"${name}"}\n`));
      controller.close();
    },
  });
  const report = await leads.import(stream, { format: 'ndjson', onProgress: (p: { bytes: number }) => importProgress.push(p) });
  const names: string[] = [];
  for await (const r of leads.list({ limit: 2, sort: 'data.name' })) names.push(r.data.name);
  const exported = await new Response(await leads.export()).text();
  const downloaded = await (await pb.collection('leads').files.download(file.id)).text();
  const headers = new Headers({ 'x-baas-timestamp': vector.timestamp, 'x-baas-signature': vector.signature });
  const event = await verifyWebhook(vector.body, headers, vector.secret, { now: Number(vector.timestamp) * 1000 });
  const error = await leads.get('rec_00000000000000000000000000').catch((e: InstanceType<typeof PlainbaseError>) => ({ plainbase: e instanceof PlainbaseError, code: e.code, status: e.status }));
  return { created, etag: created.etag, file, uploadProgress, report, importProgress, names, exportedLines: exported.trim().split('\n').length, downloaded, event, error };
}
