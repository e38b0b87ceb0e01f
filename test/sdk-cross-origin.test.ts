import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchBrowser, releaseBrowser } from './e2e/support/browser.js';
import { startOtherOrigin, type OtherOrigin } from './support/other-origin.js';
import { startSdkWorld, type SdkWorld } from './support/sdk-world.js';

/**
 * The data API and the SDK from web pages of other sites, in Chromium: the service on
 * 127.0.0.1:<port>, three sites on localhost:<other ports>. `app` is in PLAINBASE_CORS_ORIGINS (a
 * browser app with a key); `form` is only in the collection's submission origins (a site with a
 * form); `stranger` is in neither. What is proven is the browser's own verdict (CORS is enforced
 * by the browser, not by the server's answer alone), and that nothing from a refused page reaches
 * the data. SQLite only: the server side of CORS and submissions is tested on both engines by
 * their own files.
 */
describe.skipIf(!inject('chromiumPresent'))('the data API and the SDK from other origins (Chromium)', () => {
  let w: SdkWorld;
  let browser: Browser;
  let app: OtherOrigin;
  let form: OtherOrigin;
  let stranger: OtherOrigin;
  let key: string;
  let collectionId: string;

  beforeAll(async () => {
    const buildError = inject('sdkBuildError');
    if (buildError) throw new Error(`sdk/dist could not be built:\n${buildError}`);
    [app, form, stranger, browser] = await Promise.all([startOtherOrigin(), startOtherOrigin(), startOtherOrigin(), launchBrowser()]);
    w = await startSdkWorld('sqlite', { corsOrigins: [app.origin] });
    const created = await w.main.owner.post('/v1/collections', { name: 'leads', settings: { submissions: { enabled: true, origins: [form.origin] } } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    collectionId = created.body.id;
    key = await w.main.key(['records:read', 'records:create']);
  }, 60_000);

  afterAll(async () => {
    await releaseBrowser(browser);
    await Promise.all([w?.close(), app?.close(), form?.close(), stranger?.close()]);
  });

  async function pageOn(site: OtherOrigin): Promise<Page> {
    const context = await browser.newContext();
    context.setDefaultTimeout(20_000);
    const page = await context.newPage();
    await page.goto(`${site.origin}/`);
    return page;
  }

  /** Runs `fn` in the page, with the SDK's browser build (from the site's /sdk/) as its first argument. */
  async function inPage<T>(page: Page, fn: (sdk: any, args: any) => Promise<T>, args: Record<string, unknown>): Promise<T> {
    // Sent as text, so that the test runner does not rewrite the import() in it.
    const source = `(async (args) => { const sdk = await import(location.origin + '/sdk/browser.js'); return (${fn.toString()})(sdk, args); })(${JSON.stringify(args)})`;
    return (await page.evaluate(source)) as T;
  }

  async function count(): Promise<number> {
    const list = await w.main.owner.get(`/v1/collections/${collectionId}/records?limit=1000`);
    expect(list.status).toBe(200);
    return list.body.data.length;
  }

  it('lets a site of PLAINBASE_CORS_ORIGINS fetch the data API with a key, and the browser blocks the others', async () => {
    const call = async (_sdk: unknown, { base, key, collectionId }: { base: string; key: string; collectionId: string }) => {
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      try {
        const created = await fetch(`${base}/v1/collections/${collectionId}/records`, { method: 'POST', headers, body: JSON.stringify({ data: { name: 'by fetch' } }) });
        const body = await created.json();
        const list = await fetch(`${base}/v1/collections/${collectionId}/records`, { headers });
        return { status: created.status, etag: created.headers.get('etag'), requestId: created.headers.get('x-request-id'), name: body.data?.name, listStatus: list.status };
      } catch (error) {
        return { blocked: (error as Error).name };
      }
    };
    const args = { base: w.base, key, collectionId };
    const before = await count();

    const fromApp = await inPage(await pageOn(app), call, args);
    expect(fromApp).toMatchObject({ status: 201, name: 'by fetch', listStatus: 200, etag: '"1"' });
    // Headers a client needs are exposed to the page.
    expect((fromApp as { requestId: string }).requestId).toMatch(/^req_/);

    // Blocked at the preflight: the POST never ran, so nothing was created by it. A site allowed
    // to submit to one collection is no more allowed to use a key than any other.
    for (const site of [stranger, form]) expect(await inPage(await pageOn(site), call, args), site.origin).toEqual({ blocked: 'TypeError' });
    expect(await count()).toBe(before + 1);
  });

  it('runs the SDK with a key on a site of PLAINBASE_CORS_ORIGINS, and fails it with NETWORK_ERROR on another', async () => {
    const call = async (sdk: any, { base, key, collectionId }: { base: string; key: string; collectionId: string }) => {
      const pb = new sdk.Plainbase({ url: base, key });
      try {
        const created = await pb.collection(collectionId).records.create({ name: 'by sdk' });
        const read = await pb.collection(collectionId).records.get(created.id);
        const missing = await pb
          .collection(collectionId)
          .records.get('rec_00000000000000000000000000')
          .catch((error: any) => ({ plainbase: error instanceof sdk.PlainbaseError, code: error.code, status: error.status }));
        return { name: read.data.name, etag: read.etag, missing };
      } catch (error: any) {
        return { plainbase: error instanceof sdk.PlainbaseError, code: error.code, status: error.status };
      }
    };
    const args = { base: w.base, key, collectionId };
    const before = await count();

    const fromApp = await inPage(await pageOn(app), call, args);
    // The API's own error body reaches the page too: CORS headers are on refusals as well.
    expect(fromApp).toEqual({ name: 'by sdk', etag: '"1"', missing: { plainbase: true, code: 'NOT_FOUND', status: 404 } });

    const fromStranger = await inPage(await pageOn(stranger), call, args);
    expect(fromStranger).toEqual({ plainbase: true, code: 'NETWORK_ERROR', status: 0 });
    expect(await count()).toBe(before + 1);
  });

  it('submits publicly with no key from a site the collection lists (whatever PLAINBASE_CORS_ORIGINS says), and not from one it does not', async () => {
    const call = async (sdk: any, { base, collectionId, key }: { base: string; collectionId: string; key?: string }) => {
      // A key given to the client is not sent with a submission: the answer is the summary.
      const pb = new sdk.Plainbase(key ? { url: base, key } : { url: base });
      try {
        return { receipt: await pb.submissions(collectionId).submit({ name: 'by a visitor' }) };
      } catch (error: any) {
        return { plainbase: error instanceof sdk.PlainbaseError, code: error.code, status: error.status };
      }
    };
    const before = await count();

    const formPage = await pageOn(form);
    const fromForm = (await inPage(formPage, call, { base: w.base, collectionId })) as { receipt: Record<string, unknown> };
    expect(Object.keys(fromForm.receipt ?? fromForm).sort()).toEqual(['collectionId', 'createdAt', 'files', 'id', 'revision', 'trashedAt', 'updatedAt']);
    expect(fromForm.receipt).toMatchObject({ collectionId, revision: 1, files: [], trashedAt: null });
    const stored = await w.main.owner.get(`/v1/collections/${collectionId}/records/${fromForm.receipt.id as string}`);
    expect(stored.body.data).toEqual({ name: 'by a visitor' });

    const withKey = (await inPage(formPage, call, { base: w.base, collectionId, key })) as { receipt: Record<string, unknown> };
    expect(withKey.receipt).not.toHaveProperty('data');
    expect(withKey.receipt).toMatchObject({ collectionId, revision: 1 });

    // The stranger's preflight is refused: the browser never sends the submission.
    const fromStranger = await inPage(await pageOn(stranger), call, { base: w.base, collectionId });
    expect(fromStranger).toEqual({ plainbase: true, code: 'NETWORK_ERROR', status: 0 });
    expect(await count()).toBe(before + 2);
  });

  it("shows a listed site the service's refusal of a submission (the error body crosses origins)", async () => {
    const limited = await w.main.owner.post('/v1/collections', { name: 'limited', settings: { submissions: { enabled: true, origins: [form.origin], ratePerMinute: 1 } } });
    expect(limited.status).toBe(201);
    const call = async (sdk: any, { base, id }: { base: string; id: string }) => {
      const submissions = new sdk.Plainbase({ url: base }).submissions(id);
      const outcome = (n: number) =>
        submissions.submit({ n }).then(
          () => 'stored',
          (error: any) => ({ plainbase: error instanceof sdk.PlainbaseError, code: error.code, status: error.status }),
        );
      return [await outcome(1), await outcome(2)];
    };
    expect(await inPage(await pageOn(form), call, { base: w.base, id: limited.body.id })).toEqual(['stored', { plainbase: true, code: 'RATE_LIMITED', status: 429 }]);
  });
});
