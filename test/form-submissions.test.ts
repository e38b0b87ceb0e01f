import net from 'node:net';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { Client, expectError, KeyClient, signedInOwner } from './support/client.js';
import { CaptchaStandIn } from './support/captcha-stand-in.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/**
 * Public submissions from plain HTML forms, end to end on both engines: urlencoded and
 * multipart bodies (files included), values converted by the active schema, redirects (303), and
 * the CAPTCHA checked by a real stand-in of the provider on loopback.
 */

const PAGE = 'https://forms.example.com';
const THANKS = `${PAGE}/thanks`;
const BOUNDARY = '----plainbaseE2eBoundary';
const standIn = new CaptchaStandIn();
let verifyUrl: string;

beforeAll(async () => {
  verifyUrl = await standIn.start();
});
afterAll(() => standIn.stop());

const urlencoded = (fields: [string, string][]) => new URLSearchParams(fields).toString();
const multipartBody = (parts: ({ name: string; value: string } | { name: string; filename: string; type: string; content: string })[]) =>
  parts
    .map((part) =>
      'filename' in part
        ? `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${part.filename}"\r\nContent-Type: ${part.type}\r\n\r\n${part.content}\r\n`
        : `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`)
    .join('') + `--${BOUNDARY}--\r\n`;
const FORM = { 'content-type': 'application/x-www-form-urlencoded', origin: PAGE };
const MULTIPART = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, origin: PAGE };

describeEachEngine('form submissions', (engine) => {
  let t: TestApp;
  let owner: Client;
  let anonymous: Client;
  beforeEach(async () => {
    t = await startTestApp(engine, {
      env: 'development',
      webhookAllowPrivate: true,
      captchaVerifyUrls: { turnstile: verifyUrl, hcaptcha: verifyUrl.replace('/siteverify', '/hcaptcha') },
    });
    owner = await signedInOwner(t);
    anonymous = new Client(t);
  });
  afterEach(async () => {
    await t.close();
  });

  async function formCollection(settings: Record<string, unknown> = {}, schema?: Record<string, unknown>, name = 'signups'): Promise<string> {
    const created = await owner.post('/v1/collections', { name, settings: { submissions: { enabled: true, origins: [PAGE], ratePerMinute: 1000, ...settings } } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    if (schema) {
      expect((await owner.post(`/v1/collections/${name}/schemas`, { schema })).status).toBe(201);
      expect((await owner.post(`/v1/collections/${name}/schemas/1/activate`)).status).toBe(200);
    }
    return created.body.id;
  }

  const records = async (name = 'signups') => (await owner.get(`/v1/collections/${name}/records`)).body.data as { id: string; data: Record<string, unknown>; files: string[] }[];
  const files = async (name = 'signups') => (await owner.get(`/v1/collections/${name}/files`)).body.data as { id: string; name: string; size: number; createdBy: unknown }[];

  const SCHEMA = {
    type: 'object',
    properties: {
      email: { type: 'string' },
      age: { type: 'integer' },
      score: { type: 'number' },
      subscribe: { type: 'boolean' },
      topics: { type: 'array', items: { type: 'string' } },
      cv: { type: 'string' },
    },
    required: ['email'],
    additionalProperties: false,
  };

  it('takes an urlencoded form, converting each value by the schema, and answers the summary', async () => {
    const col = await formCollection({}, SCHEMA);
    const reply = await anonymous.post(`/v1/collections/${col}/records`, urlencoded([['email', 'a@example.com'], ['age', '42'], ['score', '-1.5e2'], ['topics', 'news'], ['topics', 'offers']]), FORM);
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    expect(Object.keys(reply.body).sort()).toEqual(['collectionId', 'createdAt', 'files', 'id', 'revision', 'trashedAt', 'updatedAt']);
    const [record] = await records();
    // The unticked checkbox (subscribe) is false.
    expect(record!.data).toEqual({ email: 'a@example.com', age: 42, score: -150, subscribe: false, topics: ['news', 'offers'] });
    expect(record!.id).toBe(reply.body.id);
  });

  it('refuses a bad number with 422, as a schema failure, and stores nothing', async () => {
    const col = await formCollection({}, SCHEMA);
    const reply = await anonymous.post(`/v1/collections/${col}/records`, urlencoded([['email', 'a@example.com'], ['age', 'forty']]), FORM);
    expect(expectError(reply, 422, 'SCHEMA_VALIDATION_FAILED').details).toEqual({ errors: [{ field: 'data.age', message: 'is not a whole number' }] });
    // A field the schema does not allow: the schema's own 422.
    expectError(await anonymous.post(`/v1/collections/${col}/records`, urlencoded([['email', 'a@example.com'], ['extra', 'x']]), FORM), 422, 'SCHEMA_VALIDATION_FAILED');
    expect(await records()).toEqual([]);
  });

  it('without a schema keeps every value as text, a repeated field as an array; reserved fields are never stored', async () => {
    const col = await formCollection({ honeypot: 'website' });
    const reply = await anonymous.post(
      `/v1/collections/${col}/records`,
      urlencoded([['name', 'Ada'], ['n', '1'], ['tag', 'a'], ['tag', 'b'], ['a[b]', 'flat'], ['website', ''], ['cf-turnstile-response', 'x'], ['h-captcha-response', 'y'], ['captchaToken', 'z']]),
      FORM,
    );
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    expect((await records())[0]!.data).toEqual({ name: 'Ada', n: '1', tag: ['a', 'b'], 'a[b]': 'flat' });
  });

  it('takes a multipart form with files: stored, attached to the record, each field holding its file id', async () => {
    const col = await formCollection({}, SCHEMA);
    const body = multipartBody([
      { name: 'email', value: 'cv@example.com' },
      { name: 'subscribe', value: 'on' },
      { name: 'cv', filename: 'cv.txt', type: 'text/plain', content: 'my life so far' },
      { name: 'ignored', filename: '', type: 'application/octet-stream', content: '' },
    ]);
    const reply = await anonymous.post(`/v1/collections/${col}/records`, body, MULTIPART);
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    const [file] = await files();
    expect(file).toMatchObject({ name: 'cv.txt', size: 14, createdBy: { type: 'anonymous', id: null } });
    expect(reply.body.files).toEqual([file!.id]);
    expect(reply.body.revision).toBe(1);
    const [record] = await records();
    expect(record).toMatchObject({ data: { email: 'cv@example.com', subscribe: true, cv: file!.id }, files: [file!.id] });
    const content = await owner.get(`/v1/collections/signups/files/${file!.id}/content`);
    expect(content.body).toBe('my life so far');
    // Created holding the file: revision 1, no attach afterwards (which would be a new revision).
    expect((await owner.get(`/v1/collections/signups/records/${record!.id}`)).headers.etag).toBe('"1"');
  });

  it('keeps no file of a refused multipart submission', async () => {
    const col = await formCollection({}, SCHEMA);
    const body = multipartBody([{ name: 'cv', filename: 'cv.txt', type: 'text/plain', content: 'x' }, { name: 'age', value: 'old' }, { name: 'email', value: 'e@example.com' }]);
    expectError(await anonymous.post(`/v1/collections/${col}/records`, body, MULTIPART), 422, 'SCHEMA_VALIDATION_FAILED');
    // Removed after the answer: wait for it.
    await expect.poll(files, { timeout: 10_000 }).toEqual([]);
    expect(await records()).toEqual([]);
  });

  it('redirects (303) to a listed origin on success, and with ?error=CODE on a refusal after the form was read', async () => {
    const col = await formCollection({}, SCHEMA);
    const ok = await anonymous.post(`/v1/collections/${col}/records`, urlencoded([['email', 'r@example.com'], ['redirect', `${THANKS}?from=form`]]), FORM);
    expect(ok.status).toBe(303);
    expect(ok.headers.location).toBe(`${THANKS}?from=form`);
    // In the query, for a multipart form.
    const viaQuery = await anonymous.post(`/v1/collections/${col}/records?redirect=${encodeURIComponent(THANKS)}`, multipartBody([{ name: 'email', value: 'q@example.com' }]), MULTIPART);
    expect(viaQuery.status).toBe(303);
    expect(viaQuery.headers.location).toBe(THANKS);
    const refused = await anonymous.post(`/v1/collections/${col}/records`, urlencoded([['email', 'r@example.com'], ['age', 'x'], ['redirect', THANKS]]), FORM);
    expect(refused.status).toBe(303);
    expect(refused.headers.location).toBe(`${THANKS}?error=SCHEMA_VALIDATION_FAILED`);
    expect((await records()).map((record) => record.data.email).sort()).toEqual(['q@example.com', 'r@example.com']);
    // Counted by what happened, though every answer was a 303.
    const counts = (await owner.get(`/v1/collections/${col}/submissions`)).body;
    expect(counts).toMatchObject({ accepted: 2, refused: 1, refusedBy: { INVALID: 1 } });
  });

  it('refuses a redirect to an origin not listed (400), whatever the rest, and stores nothing', async () => {
    const col = await formCollection();
    for (const redirect of ['https://evil.example/phish', 'javascript:alert(1)', '/relative', `${PAGE}.evil.example/`, 'https://user@forms.example.com/']) {
      const reply = await anonymous.post(`/v1/collections/${col}/records`, urlencoded([['email', 'x'], ['redirect', redirect]]), FORM);
      expect(expectError(reply, 400, 'INVALID_REQUEST').details).toEqual({ field: 'body.redirect' });
    }
    expectError(await anonymous.post(`/v1/collections/${col}/records?redirect=${encodeURIComponent('https://evil.example/')}`, urlencoded([['email', 'x']]), FORM), 400, 'INVALID_REQUEST');
    // ?redirect= is for forms only.
    expectError(await anonymous.post(`/v1/collections/${col}/records?redirect=${encodeURIComponent(THANKS)}`, { data: { email: 'x' } }, { origin: PAGE }), 400, 'INVALID_REQUEST');
    expect(await records()).toEqual([]);
  });

  it('answers a filled honeypot like a success (303 to the redirect) and stores nothing, files included', async () => {
    const col = await formCollection({ honeypot: 'website' });
    const body = multipartBody([{ name: 'website', value: 'http://spam.example' }, { name: 'cv', filename: 'spam.txt', type: 'text/plain', content: 'spam' }, { name: 'redirect', value: THANKS }]);
    const reply = await anonymous.post(`/v1/collections/${col}/records`, body, MULTIPART);
    expect(reply.status).toBe(303);
    expect(reply.headers.location).toBe(THANKS);
    await expect.poll(files, { timeout: 10_000 }).toEqual([]);
    expect(await records()).toEqual([]);
  });

  it('checks the CAPTCHA with the provider: JSON captchaToken and the widgets\' form fields', async () => {
    const col = await formCollection({ captcha: { provider: 'turnstile', secret: 'turnstile-secret-1' } });
    const before = standIn.calls.length;
    expect((await anonymous.post(`/v1/collections/${col}/records`, { data: { via: 'json' }, captchaToken: 'pass-json' }, { origin: PAGE })).status).toBe(201);
    expect((await anonymous.post(`/v1/collections/${col}/records`, urlencoded([['via', 'turnstile'], ['cf-turnstile-response', 'pass-t']]), FORM)).status).toBe(201);
    expect((await anonymous.post(`/v1/collections/${col}/records`, multipartBody([{ name: 'via', value: 'hcaptcha-field' }, { name: 'h-captcha-response', value: 'pass-h' }]), MULTIPART)).status).toBe(201);
    const calls = standIn.calls.slice(before);
    expect(calls.map((call) => [call.path, call.form.get('secret'), call.form.get('response')])).toEqual([
      ['/siteverify', 'turnstile-secret-1', 'pass-json'],
      ['/siteverify', 'turnstile-secret-1', 'pass-t'],
      ['/siteverify', 'turnstile-secret-1', 'pass-h'],
    ]);
    expect(calls[0]!.form.get('remoteip')).toBe('127.0.0.1');
    // None of the token fields is stored.
    expect((await records()).map((record) => record.data).sort((a, b) => String(a.via).localeCompare(String(b.via)))).toEqual([{ via: 'hcaptcha-field' }, { via: 'json' }, { via: 'turnstile' }]);

    // Refused by the provider, missing, or with a redirect: 403 CAPTCHA_FAILED, or 303 with the code.
    expectError(await anonymous.post(`/v1/collections/${col}/records`, urlencoded([['via', 'bad'], ['cf-turnstile-response', 'wrong']]), FORM), 403, 'CAPTCHA_FAILED');
    expectError(await anonymous.post(`/v1/collections/${col}/records`, urlencoded([['via', 'none']]), FORM), 403, 'CAPTCHA_FAILED');
    const redirected = await anonymous.post(`/v1/collections/${col}/records`, urlencoded([['via', 'bad'], ['cf-turnstile-response', 'wrong'], ['redirect', THANKS]]), FORM);
    expect(redirected.headers.location).toBe(`${THANKS}?error=CAPTCHA_FAILED`);
    expect(await records()).toHaveLength(3);
  });

  it('uses the hCaptcha endpoint for an hCaptcha collection, and fails closed when the provider is down', async () => {
    const col = await formCollection({ captcha: { provider: 'hcaptcha', secret: 'hcaptcha-secret-2' } });
    const before = standIn.calls.length;
    expect((await anonymous.post(`/v1/collections/${col}/records`, urlencoded([['a', '1'], ['h-captcha-response', 'pass-x']]), FORM)).status).toBe(201);
    expect(standIn.calls.slice(before).map((call) => call.path)).toEqual(['/hcaptcha']);
    standIn.answer = () => ({ status: 502, body: '<html>Bad gateway</html>', contentType: 'text/html' });
    try {
      const error = expectError(await anonymous.post(`/v1/collections/${col}/records`, urlencoded([['a', '2'], ['h-captcha-response', 'pass-y']]), FORM), 403, 'CAPTCHA_FAILED');
      expect(error.message).toMatch(/verification was unavailable/);
    } finally {
      standIn.answer = new CaptchaStandIn().answer;
    }
    expect(await records()).toHaveLength(1);
  });

  it('keeps JSON for keyed callers: a form with a key is 415; the second workspace is untouched', async () => {
    await formCollection();
    const key = (await owner.post('/v1/keys', { name: 'writer', scopes: ['records:create', 'records:read'] })).body.secret as string;
    const keyed = new KeyClient(t, key);
    expectError(await keyed.post('/v1/collections/signups/records', urlencoded([['a', '1']]), { 'content-type': 'application/x-www-form-urlencoded' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectError(await keyed.post('/v1/collections/signups/records', multipartBody([{ name: 'a', value: '1' }]), { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expect((await keyed.post('/v1/collections/signups/records', { data: { a: 1 } })).status).toBe(201);
    // Other routes never take forms.
    expectError(await owner.post('/v1/collections', urlencoded([['name', 'x']]), { 'content-type': 'application/x-www-form-urlencoded' }), 415, 'UNSUPPORTED_MEDIA_TYPE');

  });

  it('refuses hostile forms with a clear 4xx and stores nothing', async () => {
    const col = await formCollection();
    const post = (body: string, headers = FORM) => anonymous.post(`/v1/collections/${col}/records`, body, headers);
    expectError(await post('__proto__=x&a=1'), 400, 'INVALID_REQUEST');
    expectError(await post('constructor=x'), 400, 'INVALID_REQUEST');
    expectError(await post('a=%00'), 400, 'INVALID_REQUEST');
    expectError(await post(Array.from({ length: 101 }, (_, i) => `f${i}=1`).join('&')), 413, 'PAYLOAD_TOO_LARGE');
    expectError(await post(`a=${'x'.repeat(70 * 1024)}`), 413, 'PAYLOAD_TOO_LARGE');
    expectError(await post('redirect=a&redirect=b'), 400, 'INVALID_REQUEST');
    expectError(await post(multipartBody([{ name: '__proto__', value: 'x' }]), MULTIPART), 400, 'INVALID_REQUEST');
    expectError(await post(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="cv"; filename="x.txt"\r\n\r\nhalf`, MULTIPART), 400, 'INVALID_REQUEST');
    expectError(await post(multipartBody([{ name: 'a', value: '1' }]), { ...MULTIPART, 'content-type': 'multipart/form-data' }), 400, 'INVALID_REQUEST');
    const manyFiles = multipartBody(Array.from({ length: 11 }, (_, i) => ({ name: 'f', filename: `${i}.txt`, type: 'text/plain', content: 'x' })));
    expectError(await post(manyFiles, MULTIPART), 413, 'PAYLOAD_TOO_LARGE');
    await expect.poll(files, { timeout: 10_000 }).toEqual([]);
    expect(await records()).toEqual([]);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('keeps no file of a form whose sender goes away in the middle of it', async () => {
    const col = await formCollection();
    const address = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = new URL(address);
    const head = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="a"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nwhole\r\n` +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="b"; filename="b.txt"\r\nContent-Type: text/plain\r\n\r\n${'x'.repeat(10_000)}`;
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /v1/collections/${col}/records HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: ${PAGE}\r\n` +
        `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${head.length + 100_000}\r\n\r\n${head}`,
    );
    // The first file is stored as it arrives; then the sender leaves.
    await expect.poll(async () => (await files()).length, { timeout: 10_000 }).toBeGreaterThan(0);
    socket.destroy();
    await expect.poll(files, { timeout: 10_000 }).toEqual([]);
    expect(await records()).toEqual([]);
  });

  it("answers any urlencoded form with a record or a clear 4xx, storing data of the schema's types", async () => {
    const col = await formCollection({}, { type: 'object', properties: { n: { type: 'integer' }, ok: { type: 'boolean' }, tags: { type: 'array', items: { type: 'number' } } } });
    const name = fc.oneof(fc.constantFrom('n', 'ok', 'tags', 'text', 'redirect', '__proto__', 'constructor', 'a[b]', ''), fc.string({ maxLength: 8 }));
    const value = fc.oneof(fc.constantFrom('1', '-0', 'on', 'off', '', '1e3', 'NaN', THANKS, 'https://evil.example/'), fc.string({ maxLength: 12, unit: 'binary' }));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(name, value), { maxLength: 8 }), async (fields) => {
        const reply = await anonymous.post(`/v1/collections/${col}/records`, urlencoded(fields), FORM);
        expect([201, 303, 400, 413, 422], JSON.stringify({ fields, reply: reply.body })).toContain(reply.status);
        if (reply.status >= 400) {
          expect(reply.body.error.code).toMatch(/^(INVALID_REQUEST|PAYLOAD_TOO_LARGE|SCHEMA_VALIDATION_FAILED)$/);
          return;
        }
        const stored = reply.status === 201 ? reply.body.id : null;
        if (stored) {
          const { data } = (await owner.get(`/v1/collections/signups/records/${stored}`)).body;
          // The reserved field is never data; the schema's types hold.
          expect(Object.hasOwn(data, 'redirect')).toBe(false);
          if (Object.hasOwn(data, 'n')) expect(Number.isSafeInteger(data.n)).toBe(true);
          expect(typeof data.ok).toBe('boolean');
          if (Object.hasOwn(data, 'tags')) for (const tag of data.tags) expect(Number.isFinite(tag)).toBe(true);
        }
      }),
      { numRuns: 60 },
    );
    expect(({} as Record<string, unknown>).constructor).toBe(Object);
  }, 120_000);
});
