import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { Plainbase, PlainbaseError } from '../sdk/src/index.js';
import { CaptchaStandIn } from './support/captcha-stand-in.js';
import { describeEachEngine } from './support/harness.js';
import { startSdkWorld, type SdkWorld } from './support/sdk-world.js';

const SUMMARY_KEYS = ['collectionId', 'createdAt', 'files', 'id', 'revision', 'trashedAt', 'updatedAt'];

/** What a refused call throws, as plain values. */
async function refusal(call: Promise<unknown>): Promise<{ plainbase: boolean; code: string; status: number }> {
  const error = await call.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error, 'the call was refused').toBeInstanceOf(PlainbaseError);
  const { code, status } = error as PlainbaseError;
  return { plainbase: error instanceof PlainbaseError, code, status };
}

/** Turnstile's verification endpoint, stood in on loopback: it takes tokens starting with `pass`. */
const standIn = new CaptchaStandIn();
let verifyUrl: string;
beforeAll(async () => {
  verifyUrl = await standIn.start();
});
afterAll(() => standIn.stop());

describeEachEngine('public submissions with the SDK', (engine) => {
  let w: SdkWorld;

  beforeEach(async () => {
    w = await startSdkWorld(engine, { env: 'development', webhookAllowPrivate: true, captchaVerifyUrls: { turnstile: verifyUrl, hcaptcha: verifyUrl } });
  });
  afterEach(async () => {
    await w?.close();
  });

  /** A collection of the main workspace; `submissions` are its settings' (none: off). */
  async function collection(name: string, submissions?: Record<string, unknown>): Promise<string> {
    const created = await w.main.owner.post('/v1/collections', { name, ...(submissions ? { settings: { submissions } } : {}) });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.id;
  }

  it('creates a record with no key and answers its summary only', async () => {
    const id = await collection('signups', { enabled: true, origins: ['https://www.example.com'] });
    const receipt = await new Plainbase({ url: w.base }).submissions<{ email: string }>(id).submit({ email: 'ada@example.com' });
    expect(Object.keys(receipt).sort()).toEqual(SUMMARY_KEYS);
    expect(receipt).toMatchObject({ collectionId: id, revision: 1, files: [], trashedAt: null });
    const stored = await w.main.owner.get(`/v1/collections/${id}/records/${receipt.id}`);
    expect(stored.body.data).toEqual({ email: 'ada@example.com' });
  });

  it('sends no credential with a submission, even from a client that has a key', async () => {
    const id = await collection('signups', { enabled: true, origins: ['*'] });
    const key = await w.main.key(['records:read', 'records:create']);
    // With the key, a create answers the whole record; a submission never does.
    for (const pb of [new Plainbase({ url: w.base, key }), new Plainbase({ url: w.base, headers: { Authorization: `Bearer ${key}`, 'X-Baas-Workspace': w.main.id } })]) {
      const receipt = await pb.submissions(id).submit({ n: 1 });
      expect(Object.keys(receipt).sort()).toEqual(SUMMARY_KEYS);
    }
    const keyed = await new Plainbase({ url: w.base, key }).collection(id).records.create({ n: 2 });
    expect(keyed.data).toEqual({ n: 2 });
  });

  it('throws PlainbaseError with the API code for each refusal', async () => {
    const off = await collection('closed');
    const open = await collection('open', { enabled: true, origins: ['https://www.example.com'], ratePerMinute: 2 });
    const visitor = new Plainbase({ url: w.base });

    expect(await refusal(visitor.submissions(off).submit({ n: 1 }))).toEqual({ plainbase: true, code: 'UNAUTHENTICATED', status: 401 });
    // By name: the same answer as a collection that takes no submissions.
    expect(await refusal(visitor.submissions('open').submit({ n: 1 }))).toEqual({ plainbase: true, code: 'UNAUTHENTICATED', status: 401 });
    // What a browser on another site sends (a server-side fetch may send it too).
    const elsewhere = new Plainbase({ url: w.base, headers: { origin: 'https://evil.example' } });
    expect(await refusal(elsewhere.submissions(open).submit({ n: 1 }))).toEqual({ plainbase: true, code: 'ORIGIN_NOT_ALLOWED', status: 403 });

    const allowed = new Plainbase({ url: w.base, headers: { origin: 'https://www.example.com' } });
    await allowed.submissions(open).submit({ n: 1 });
    await visitor.submissions(open).submit({ n: 2 });
    expect(await refusal(visitor.submissions(open).submit({ n: 3 }))).toEqual({ plainbase: true, code: 'RATE_LIMITED', status: 429 });
    expect((await w.main.owner.get(`/v1/collections/${open}/records`)).body.data).toHaveLength(2);
  });

  it('sends the CAPTCHA token for the provider to check', async () => {
    const id = await collection('guarded', { enabled: true, origins: ['*'], captcha: { provider: 'turnstile', secret: 'turnstile-secret' } });
    const submissions = new Plainbase({ url: w.base }).submissions(id);
    const before = standIn.calls.length;
    expect(await refusal(submissions.submit({ n: 1 }))).toEqual({ plainbase: true, code: 'CAPTCHA_FAILED', status: 403 });
    expect(await refusal(submissions.submit({ n: 2 }, { captchaToken: 'wrong' }))).toEqual({ plainbase: true, code: 'CAPTCHA_FAILED', status: 403 });
    const receipt = await submissions.submit({ n: 3 }, { captchaToken: 'pass-sdk' });
    // No token, no call; each token went to the provider with the collection's secret.
    expect(standIn.calls.slice(before).map((call) => [call.form.get('response'), call.form.get('secret')])).toEqual([
      ['wrong', 'turnstile-secret'],
      ['pass-sdk', 'turnstile-secret'],
    ]);
    const stored = (await w.main.owner.get(`/v1/collections/${id}/records`)).body.data;
    expect(stored.map((record: { id: string; data: unknown }) => [record.id, record.data])).toEqual([[receipt.id, { n: 3 }]]);
  });
});
