import { Readable } from 'node:stream';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { allAuditEntries, Client, expectError, inNewWorkspace, KeyClient, signedInOwner, type Reply } from './support/client.js';
import { outbox } from './support/events.js';
import { CONTENT_TYPES, hostileValue, jsonText, nastyJson, nastyString, RAW_BODIES } from './support/hostile-requests.js';
import { expectPrototypesUntouched } from './support/untouched-prototypes.js';
import { describeEachEngine, startTestApp, startTestAppBeside, type TestApp } from './support/harness.js';
import { startTestRedis, type TestRedis } from './support/redis-server.js';

const PAGE = 'https://forms.example.com';
const SECRET = 'turnstile-secret-0123456789';

describeEachEngine('public submissions', (engine) => {
  let t: TestApp;
  let owner: Client;
  let anonymous: Client;
  beforeEach(async () => {
    t = await startTestApp(engine, { submissionMaxBytes: 2048, submissionsPerMinute: 1000 });
    owner = await signedInOwner(t);
    anonymous = new Client(t);
  });
  afterEach(async () => { await t.close(); });

  async function formCollection(settings: Record<string, unknown> = {}, name = 'signups', by: Client = owner): Promise<string> {
    const created = await by.post('/v1/collections', { name, settings: { submissions: { enabled: true, origins: [PAGE], ...settings } } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.id;
  }
  const submit = (col: string, body: unknown, headers: Record<string, string> = { origin: PAGE }, from: Client = anonymous) => from.post(`/v1/collections/${col}/records`, body, headers);
  const recordsOf = async (col: string, by: Client = owner) => (await by.get(`/v1/collections/${col}/records?limit=1000`)).body.data as { id: string; data: Record<string, unknown> }[];

  it('takes a record without a credential, answers its summary only, and names the writer anonymous', async () => {
    const col = await formCollection();
    const reply = await submit(col, { data: { email: 'a@example.com' } });
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    expect(Object.keys(reply.body).sort()).toEqual(['collectionId', 'createdAt', 'files', 'id', 'revision', 'trashedAt', 'updatedAt']);
    expect(reply.body).toMatchObject({ collectionId: col, revision: 1, files: [], trashedAt: null });
    expect(reply.headers.etag).toBeUndefined();
    expect(reply.headers['access-control-allow-origin']).toBe(PAGE);
    expect(reply.headers['access-control-allow-credentials']).toBeUndefined();
    expect(String(reply.headers.vary)).toMatch(/\bOrigin\b/);
    // Without an Origin header (a server, curl) too.
    expect((await submit(col, { data: { email: 'b@example.com' } }, {})).status).toBe(201);

    const stored = await owner.get(`/v1/collections/${col}/records/${reply.body.id}`);
    expect(stored.body.data).toEqual({ email: 'a@example.com' });
    const audit = await allAuditEntries(owner, 'action=record.created');
    expect(audit).toHaveLength(2);
    expect(audit[0].actor).toEqual({ type: 'anonymous', id: null, name: null, ip: '127.0.0.1' });
    expect(audit[0].ip).toBe('127.0.0.1');
    const created = (await outbox(t)).filter((event) => event.type === 'record.created');
    expect(created.map((event) => event.data.record.id).sort()).toEqual([reply.body.id, audit[0].target.id].sort());
  });

  it('answers every collection it does not take submissions for with the same 401', async () => {
    const open = await formCollection();
    const off = await formCollection({ enabled: false }, 'closed');
    const plain = (await owner.post('/v1/collections', { name: 'plain' })).body.id;
    const trashed = await formCollection({}, 'trashed');
    expect((await owner.delete('/v1/collections/trashed')).status).toBe(200);
    const answers: Reply[] = [];
    for (const url of [
      `/v1/collections/${off}/records`,
      `/v1/collections/${plain}/records`,
      `/v1/collections/${trashed}/records`,
      '/v1/collections/col_00000000000000000000000000/records',
      '/v1/collections/signups/records',
    ]) {
      const reply = await anonymous.post(url, { data: {} }, { origin: PAGE, 'x-baas-workspace': owner.workspaceId! });
      expectError(reply, 401, 'UNAUTHENTICATED');
      answers.push(reply);
    }
    expect(new Set(answers.map((reply) => reply.body.error.message)).size).toBe(1);
    expect(await recordsOf(open)).toEqual([]);
  });

  it('refuses a page of another origin (403 ORIGIN_NOT_ALLOWED) and stores nothing; * admits any', async () => {
    const col = await formCollection();
    const refused = await submit(col, { data: { a: 1 } }, { origin: 'https://evil.example' });
    expectError(refused, 403, 'ORIGIN_NOT_ALLOWED');
    expect(refused.headers['access-control-allow-origin']).toBeUndefined();
    // Origins compare as browsers send them: scheme, host and port.
    expectError(await submit(col, { data: {} }, { origin: 'http://forms.example.com' }), 403, 'ORIGIN_NOT_ALLOWED');
    expectError(await submit(col, { data: {} }, { origin: 'https://forms.example.com:8443' }), 403, 'ORIGIN_NOT_ALLOWED');
    expect(await recordsOf(col)).toEqual([]);

    const any = await formCollection({ origins: ['*'] }, 'anyone');
    expect((await submit(any, { data: {} }, { origin: 'https://elsewhere.example' })).status).toBe(201);
  });

  it('never serves a cross-origin submission as the session whose cookie it carries', async () => {
    const col = await formCollection();
    const carrier = new Client(t);
    carrier.cookie = owner.cookie;
    const reply = await submit(col, { data: { via: 'cookie' } }, { origin: PAGE }, carrier);
    expect(reply.status).toBe(201);
    expect(reply.body.data).toBeUndefined();
    const [entry] = await allAuditEntries(owner, 'action=record.created');
    expect(entry.actor.type).toBe('anonymous');
    // To a collection that takes no submissions, the cookie does not stand in: 401.
    const plain = (await owner.post('/v1/collections', { name: 'plain' })).body.id;
    expectError(await submit(plain, { data: {} }, { origin: PAGE }, carrier), 401, 'UNAUTHENTICATED');
    // The dashboard's own origin keeps its session.
    expect((await owner.post(`/v1/collections/${plain}/records`, { data: {} }, { origin: 'http://plainbase.test' })).body.data).toEqual({});
  });

  it('stores nothing for a filled honeypot but answers as if it had; an empty one is left out', async () => {
    const col = await formCollection({ honeypot: 'website' });
    const trap = await submit(col, { data: { email: 'bot@example.com', website: 'http://spam.example' } });
    expect(trap.status).toBe(201);
    expect(Object.keys(trap.body).sort()).toEqual(['collectionId', 'createdAt', 'files', 'id', 'revision', 'trashedAt', 'updatedAt']);
    expect(trap.body.id).toMatch(/^rec_/);
    expect(await recordsOf(col)).toEqual([]);
    expect((await outbox(t)).filter((event) => event.type === 'record.created')).toEqual([]);
    expectError(await owner.get(`/v1/collections/${col}/records/${trap.body.id}`), 404, 'NOT_FOUND');

    for (const empty of ['', null]) expect((await submit(col, { data: { email: 'p@example.com', website: empty } })).status).toBe(201);
    expect((await recordsOf(col)).map((record) => record.data)).toEqual([{ email: 'p@example.com' }, { email: 'p@example.com' }]);
  });

  it('refuses a submission without its CAPTCHA (403 CAPTCHA_FAILED)', async () => {
    const col = await formCollection({ captcha: { provider: 'turnstile', secret: SECRET } });
    expectError(await submit(col, { data: {} }), 403, 'CAPTCHA_FAILED');
    expectError(await submit(col, { data: {}, captchaToken: 'made-up' }), 403, 'CAPTCHA_FAILED');
    expect(await recordsOf(col)).toEqual([]);
  });

  it('refuses a body over PLAINBASE_SUBMISSION_MAX_BYTES (413), declared or streamed, which a key may still send', async () => {
    const col = await formCollection();
    const big = { data: { text: 'x'.repeat(3000) } };
    const refused = expectError(await submit(col, big), 413, 'PAYLOAD_TOO_LARGE');
    expect(refused.details).toEqual({ limitBytes: 2048 });
    // Sent in chunks without a Content-Length.
    const chunked = await t.app.inject({
      method: 'POST',
      url: `/v1/collections/${col}/records`,
      headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked', origin: PAGE },
      payload: Readable.from(['{"data":{"text":"', ...Array.from({ length: 10 }, () => 'y'.repeat(500)), '"}}'].map((text) => Buffer.from(text))),
    });
    expect(chunked.statusCode, chunked.body).toBe(413);
    expect(JSON.parse(chunked.body).error.code).toBe('PAYLOAD_TOO_LARGE');
    // A multipart body is left to the form parser's own limits (form-submission.ts): this one is no form at all.
    expectError(await submit(col, 'x'.repeat(3000), { origin: PAGE, 'content-type': 'multipart/form-data; boundary=b' }), 400, 'INVALID_REQUEST');
    expect(await recordsOf(col)).toEqual([]);
    expect((await owner.post(`/v1/collections/${col}/records`, big)).status).toBe(201);
  });

  it('opens nothing else: no read, change, delete, replay or chosen id; the schema applies', async () => {
    const col = await formCollection();
    const { body: record } = await submit(col, { data: { n: 1 } });
    for (const [method, url, body] of [
      ['GET', `/v1/collections/${col}/records`, undefined],
      ['GET', `/v1/collections/${col}/records/${record.id}`, undefined],
      ['PATCH', `/v1/collections/${col}/records/${record.id}`, { data: { n: 2 } }],
      ['PUT', `/v1/collections/${col}/records/${record.id}`, { data: { n: 2 } }],
      ['DELETE', `/v1/collections/${col}/records/${record.id}`, undefined],
      ['GET', `/v1/collections/${col}`, undefined],
      ['GET', `/v1/collections/${col}/submissions`, undefined],
      ['POST', `/v1/collections/${col}/import`, undefined],
      ['POST', `/v1/collections/${col}/records/${record.id}/restore`, undefined],
      ['GET', `/v1/collections/${col}/export`, undefined],
    ] as const) {
      const reply = await anonymous.call(method, url, body, {});
      expect(reply.status, `${method} ${url}`).toBe(401);
    }
    expectError(await submit(col, { data: { n: 3 } }, { origin: PAGE, 'idempotency-key': 'k1' }), 400, 'INVALID_REQUEST');
    expectError(await submit(col, { id: 'rec_01jbx3q4r5s6t7v8w9x0y1z2a3', data: { n: 3 } }), 400, 'INVALID_REQUEST');
    expectError(await submit(col, { data: 'not an object' }), 400, 'INVALID_REQUEST');
    expectError(await submit(col, '{"data":', { origin: PAGE }), 400, 'INVALID_REQUEST');

    const schema = await owner.post(`/v1/collections/${col}/schemas`, { schema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'], additionalProperties: false } });
    expect(schema.status, JSON.stringify(schema.body)).toBe(201);
    expect((await owner.post(`/v1/collections/${col}/schemas/1/activate`)).status).toBe(200);
    expectError(await submit(col, { data: { n: 'three' } }), 422, 'SCHEMA_VALIDATION_FAILED');
    expect((await submit(col, { data: { n: 4 } })).status).toBe(201);
    expect((await recordsOf(col)).map((r) => r.data.n).sort()).toEqual([1, 4]);
    expect((await owner.get(`/v1/collections/${col}/records/${record.id}`)).body.data).toEqual({ n: 1 });
  });

  it('keeps the CAPTCHA secret write-only: never answered, in events or in the audit log', async () => {
    const col = await formCollection({ captcha: { provider: 'turnstile', secret: SECRET }, ratePerMinute: 30, honeypot: 'website' });
    const read = await owner.get(`/v1/collections/${col}`);
    expect(read.body.settings.submissions).toEqual({ enabled: true, origins: [PAGE], ratePerMinute: 30, honeypot: 'website', captcha: { provider: 'turnstile' } });
    const list = await owner.get('/v1/collections');
    expect(JSON.stringify(list.body)).not.toContain(SECRET);

    // Changing the description alone (as the dashboard does) keeps the submissions and their secret.
    const described = await owner.patch(`/v1/collections/${col}`, { settings: { description: 'Sign-ups' } });
    expect(described.body.settings).toEqual({ description: 'Sign-ups', submissions: read.body.settings.submissions });
    expectError(await submit(col, { data: {} }), 403, 'CAPTCHA_FAILED');
    // Sent back as read (no secret): the stored secret stays.
    const same = await owner.patch(`/v1/collections/${col}`, { settings: { submissions: read.body.settings.submissions } });
    expect(same.status, JSON.stringify(same.body)).toBe(200);
    expect(same.body.settings.submissions.captcha).toEqual({ provider: 'turnstile' });
    // Another provider without its secret: refused, nothing changed.
    expectError(await owner.patch(`/v1/collections/${col}`, { settings: { submissions: { enabled: true, origins: [PAGE], captcha: { provider: 'hcaptcha' } } } }), 400, 'INVALID_REQUEST');
    // Left out: kept. null: removed.
    const kept = await owner.patch(`/v1/collections/${col}`, { settings: { submissions: { enabled: true, origins: [PAGE] } } });
    expect(kept.body.settings.submissions).toEqual({ enabled: true, origins: [PAGE], captcha: { provider: 'turnstile' } });
    expectError(await submit(col, { data: {} }), 403, 'CAPTCHA_FAILED');
    const removed = await owner.patch(`/v1/collections/${col}`, { settings: { submissions: { enabled: true, origins: [PAGE], captcha: null } } });
    expect(removed.body.settings.submissions).toEqual({ enabled: true, origins: [PAGE] });
    expect((await submit(col, { data: {} })).status).toBe(201);
    expectError(await owner.patch(`/v1/collections/${col}`, { settings: { submissions: { enabled: true, origins: [PAGE], captcha: { provider: 'turnstile' } } } }), 400, 'INVALID_REQUEST');

    const everything = JSON.stringify([await outbox(t), await allAuditEntries(owner)]);
    expect(everything).not.toContain(SECRET);
    const stored = await t.deps.db.selectFrom('collections').select('settings').where('id', '=', col).executeTakeFirstOrThrow();
    expect(stored.settings).not.toContain(SECRET);
  });

  it('refuses hostile settings with a 400 and changes nothing', async () => {
    const col = await formCollection();
    const before = (await owner.get(`/v1/collections/${col}`)).body;
    const origins = (list: unknown) => ({ enabled: true, origins: list });
    for (const submissions of [
      origins(Array.from({ length: 101 }, (_, i) => `https://site${i}.example`)),
      origins(['https://a.example/']),
      origins(['https://a.example/path']),
      origins(['ftp://a.example']),
      origins(['javascript:alert(1)']),
      origins(['https://user:pw@a.example']),
      origins(['']),
      origins(['null']),
      origins(['https://a.example?x=1']),
      origins(['x'.repeat(400)]),
      origins('https://a.example'),
      { enabled: 'yes', origins: [] },
      { origins: [PAGE] },
      { enabled: true, origins: [], ratePerMinute: 0 },
      { enabled: true, origins: [], ratePerMinute: 1.5 },
      { enabled: true, origins: [], honeypot: '__proto__' },
      { enabled: true, origins: [], honeypot: 'has space' },
      { enabled: true, origins: [], captcha: { provider: 'recaptcha', secret: 's' } },
      { enabled: true, origins: [], captcha: { provider: 'turnstile', secret: 's', extra: 1 } },
      { enabled: true, origins: [], unknown: true },
      JSON.parse('{"enabled": true, "origins": [], "__proto__": {"polluted": true}}'),
      null,
      [],
    ]) {
      const reply = await owner.patch(`/v1/collections/${col}`, { settings: { submissions } });
      expectError(reply, 400, 'INVALID_REQUEST');
    }
    const proto = await owner.call('PATCH', `/v1/collections/${col}`, '{"settings": {"__proto__": {"submissions": {"enabled": true, "origins": ["*"]}}}}');
    expectError(proto, 400, 'INVALID_REQUEST');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((await owner.get(`/v1/collections/${col}`)).body).toEqual(before);
    expectError(await owner.post('/v1/collections', { name: 'fresh', settings: { submissions: { enabled: true, origins: [], captcha: { provider: 'turnstile' } } } }), 400, 'INVALID_REQUEST');
    // Origins are kept as browsers send them: lower case, each once.
    const tidy = await owner.patch(`/v1/collections/${col}`, { settings: { submissions: { enabled: true, origins: ['HTTPS://Forms.Example.com', PAGE, 'http://localhost:3000'] } } });
    expect(tidy.body.settings.submissions.origins).toEqual([PAGE, 'http://localhost:3000']);
  });

  it('holds each address to the collection\'s rate, exactly, under concurrent requests', async () => {
    const col = await formCollection({ ratePerMinute: 3 });
    const other = await formCollection({ ratePerMinute: 3 }, 'other');
    const from = (address: string) => Object.assign(new Client(t), { remoteAddress: address });
    const flood = await Promise.all(Array.from({ length: 12 }, () => submit(col, { data: {} }, { origin: PAGE }, from('203.0.113.9'))));
    expect(flood.filter((reply) => reply.status === 201)).toHaveLength(3);
    const limited = flood.filter((reply) => reply.status === 429);
    expect(limited).toHaveLength(9);
    for (const reply of limited) {
      expectError(reply, 429, 'RATE_LIMITED');
      expect(Number(reply.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(reply.headers['retry-after'])).toBeLessThanOrEqual(60);
    }
    // An IPv6 client counts by its /64.
    const v6 = await Promise.all(['2001:db8::1', '2001:db8::2', '2001:db8::3', '2001:db8::4'].map((address) => submit(col, { data: {} }, { origin: PAGE }, from(address))));
    expect(v6.map((reply) => reply.status).sort()).toEqual([201, 201, 201, 429]);
    // Another address, and the same address at another collection, are not held back.
    expect((await submit(col, { data: {} }, { origin: PAGE }, from('198.51.100.7'))).status).toBe(201);
    expect((await submit(other, { data: {} }, { origin: PAGE }, from('203.0.113.9'))).status).toBe(201);
    // A minute later the address may submit again.
    t.clock.advance(61_000);
    expect((await submit(col, { data: {} }, { origin: PAGE }, from('203.0.113.9'))).status).toBe(201);
    expect(await recordsOf(col)).toHaveLength(3 + 3 + 1 + 1);
  });

  it('holds a collection to PLAINBASE_SUBMISSIONS_PER_MINUTE over every address, exactly', async () => {
    await t.close();
    t = await startTestApp(engine, { submissionsPerMinute: 5 });
    owner = await signedInOwner(t);
    const col = await formCollection();
    const flood = await Promise.all(Array.from({ length: 14 }, (_, i) => submit(col, { data: { i } }, { origin: PAGE }, Object.assign(new Client(t), { remoteAddress: `192.0.2.${i + 1}` }))));
    expect(flood.filter((reply) => reply.status === 201)).toHaveLength(5);
    expect(flood.filter((reply) => reply.status === 429 && reply.body.error.code === 'RATE_LIMITED')).toHaveLength(9);
    expect(await recordsOf(col)).toHaveLength(5);
  });

  it('leaves a second workspace untouched', async () => {
    const second = await inNewWorkspace(t, owner, 'Second');
    const theirs = await formCollection({}, 'signups', second);
    const secondKey = (await second.post('/v1/keys', { name: 'reader', scopes: ['records:read', 'collections:read'] })).body.secret;
    const mine = await formCollection({ ratePerMinute: 2 });
    for (let i = 0; i < 4; i += 1) await submit(mine, { data: { i } });
    expect(await recordsOf(mine)).toHaveLength(2);
    const reader = new KeyClient(t, secondKey);
    expect((await reader.get(`/v1/collections/${theirs}/records`)).body.data).toEqual([]);
    // The first workspace's limits are not the second's.
    expect((await submit(theirs, { data: { x: 1 } })).status).toBe(201);
    expect((await reader.get(`/v1/collections/${theirs}/records`)).body.data).toHaveLength(1);
    expectError(await second.get(`/v1/collections/${mine}/submissions`), 404, 'NOT_FOUND');
    const counts = await second.get(`/v1/collections/${theirs}/submissions`);
    expect([counts.body.accepted, counts.body.refused]).toEqual([1, 0]);
  });
});

/**
 * With PLAINBASE_REDIS_URL the limits hold across processes: two apps on one database, each with
 * its own Redis connection and memory, as two processes are (the same shape as redis-limits.test.ts).
 */
const redisPresent = inject('redisServerPresent');
describe.skipIf(!redisPresent)('public submissions with redis-server', () => {
  let redis: TestRedis;
  beforeAll(async () => { redis = await startTestRedis(); }, 30_000);
  afterAll(async () => { await redis?.stop(); });

  describeEachEngine('limits counted in Redis', (engine) => {
    let a: TestApp;
    let b: TestApp;
    afterEach(async () => {
      redis.resume();
      await b?.close();
      await a?.close();
      await redis.flush();
    });

    it('holds the per-address and per-collection limits across processes, exactly under concurrent requests; counts locally while Redis is away', async () => {
      a = await startTestApp(engine, { redisUrl: redis.url, submissionsPerMinute: 6 });
      b = await startTestAppBeside(a);
      const owner = await signedInOwner(a);
      const col = (await owner.post('/v1/collections', { name: 'signups', settings: { submissions: { enabled: true, origins: ['*'], ratePerMinute: 2 } } })).body.id;
      const from = (t: TestApp, address: string) => Object.assign(new Client(t), { remoteAddress: address });
      const send = (t: TestApp, address: string) => from(t, address).post(`/v1/collections/${col}/records`, { data: {} });

      const one = await Promise.all(Array.from({ length: 8 }, (_, i) => send(i % 2 ? b : a, '203.0.113.1')));
      expect(one.filter((reply) => reply.status === 201)).toHaveLength(2);
      const many = await Promise.all(Array.from({ length: 12 }, (_, i) => send(i % 2 ? b : a, `198.51.100.${i + 1}`)));
      // Six a minute for the collection, two of them used above.
      expect(many.filter((reply) => reply.status === 201)).toHaveLength(4);
      for (const reply of [...one, ...many].filter((r) => r.status !== 201)) expectError(reply, 429, 'RATE_LIMITED');
      expect((await owner.get(`/v1/collections/${col}/records`)).body.data).toHaveLength(6);

      // Redis away: each process counts for itself rather than not at all.
      await redis.stop();
      const alone = await Promise.all(Array.from({ length: 4 }, () => send(a, '192.0.2.1')));
      expect(alone.filter((reply) => reply.status === 201)).toHaveLength(2);
      await redis.restart();
    }, 60_000);
  });
});

/**
 * Settings as a hostile editor might send them: every field a good value, a near miss or
 * something else altogether. Each PATCH answers 200 or 400 (never a 5xx), a 400 changes nothing,
 * and what a 200 stored admits only origins as browsers send them and shows no secret.
 */
describeEachEngine('public submission settings, generated', (engine) => {
  let t: TestApp;
  let owner: Client;
  let col: string;
  beforeAll(async () => {
    t = await startTestApp(engine);
    owner = await signedInOwner(t);
    col = (await owner.post('/v1/collections', { name: 'signups' })).body.id;
  });
  afterAll(async () => { await t.close(); });

  const goodOrigin = fc.constantFrom('https://example.com', 'http://localhost:3000', '*', 'HTTPS://EXAMPLE.COM', 'https://xn--bcher-kva.example', 'http://127.0.0.1:8080');
  const origin = fc.oneof(
    { weight: 4, arbitrary: goodOrigin },
    { weight: 1, arbitrary: fc.constantFrom('https://example.com/', 'https://bücher.example', 'https://example.com:443', 'null', '', ' https://example.com', 'https://a@example.com') },
    { weight: 1, arbitrary: fc.webUrl() },
    { weight: 1, arbitrary: nastyString },
  );
  const mostly = <T>(good: fc.Arbitrary<T>, bad: fc.Arbitrary<unknown>) => fc.oneof({ weight: 6, arbitrary: good }, { weight: 1, arbitrary: bad });
  const maybe = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });
  const submissions = fc.record({
    enabled: mostly(fc.boolean(), hostileValue),
    origins: maybe(mostly(fc.array(origin, { maxLength: 3 }), hostileValue)),
    ratePerMinute: maybe(mostly(fc.integer({ min: 1, max: 1000 }), fc.oneof(fc.integer({ min: -5, max: 200_000 }), fc.double(), hostileValue))),
    honeypot: maybe(mostly(fc.constantFrom('website', 'url_2', 'Fax-number'), fc.oneof(fc.constantFrom('__proto__', 'constructor', 'a b', 'x'.repeat(70)), nastyString))),
    captcha: maybe(mostly(
      fc.oneof(fc.constant(null), fc.record({ provider: fc.constantFrom('turnstile', 'hcaptcha'), secret: maybe(fc.constant('s3cret-value')) })),
      fc.oneof(fc.record({ provider: fc.constantFrom('recaptcha', 'turnstile'), secret: maybe(nastyString) }), hostileValue),
    )),
  }, { requiredKeys: [] });

  it('answers 200 or 400, and a 200 keeps only clean origins and no secret', async () => {
    const seen = new Set<number>();
    await fc.assert(fc.asyncProperty(submissions, async (settings) => {
      const before = (await owner.get(`/v1/collections/${col}`)).body;
      const reply = await owner.call('PATCH', `/v1/collections/${col}`, `{"settings":{"submissions":${jsonText(settings)}}}`);
      expect([200, 400], JSON.stringify(reply.body)).toContain(reply.status);
      seen.add(reply.status);
      if (reply.status === 400) {
        expectError(reply, 400, 'INVALID_REQUEST');
        expect((await owner.get(`/v1/collections/${col}`)).body).toEqual(before);
        return;
      }
      const shown = reply.body.settings.submissions;
      for (const listed of shown.origins) expect(listed === '*' || new URL(listed).origin === listed).toBe(true);
      expect(JSON.stringify(shown)).not.toContain('s3cret');
    }), { numRuns: 60, seed: 20261129 });
    // The generator reaches both sides of every check, or the property proves little.
    expect([...seen].sort()).toEqual([200, 400]);
    expectPrototypesUntouched();
  }, 60_000);
});

/**
 * Anonymous submissions as a hostile page or script sends them: any body, content type, origin and
 * honeypot value. Every answer is one of the documented ones (never a 5xx), in the error envelope
 * when refused; only a 201 that was no honeypot stores a record; Object.prototype is untouched.
 */
describeEachEngine('public submissions, generated', (engine) => {
  let t: TestApp;
  let owner: Client;
  let col: string;
  beforeAll(async () => {
    t = await startTestApp(engine, { submissionMaxBytes: 4096, submissionsPerMinute: 1_000_000 });
    owner = await signedInOwner(t);
    col = (await owner.post('/v1/collections', { name: 'signups', settings: { submissions: { enabled: true, origins: [PAGE], ratePerMinute: 100_000, honeypot: 'website' } } })).body.id;
  });
  afterAll(async () => { await t.close(); });

  const body = fc.oneof(
    { weight: 4, arbitrary: fc.record({ data: fc.dictionary(nastyString, hostileValue, { maxKeys: 4 }), captchaToken: fc.option(nastyString, { nil: undefined }) }, { requiredKeys: ['data'] }).map((value) => jsonText(value)) },
    { weight: 2, arbitrary: fc.record({ data: fc.record({ email: nastyString, website: fc.oneof(fc.constant(''), fc.constant(null), nastyString) }) }).map((value) => jsonText(value)) },
    { weight: 1, arbitrary: nastyJson.map((value) => jsonText(value)) },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_BODIES) },
  );
  const run = fc.record({
    body,
    contentType: fc.oneof({ weight: 4, arbitrary: fc.constant('application/json') }, { weight: 1, arbitrary: fc.constantFrom(...CONTENT_TYPES) }),
    origin: fc.option(fc.constantFrom(PAGE, 'https://evil.example', 'null', PAGE.toUpperCase(), `${PAGE}/`), { nil: undefined }),
  });

  it('answers only documented outcomes and stores a record only for a real 201', async () => {
    let stored = 0;
    const seen = new Set<number>();
    await fc.assert(fc.asyncProperty(run, async ({ body, contentType, origin }) => {
      const response = await t.app.inject({
        method: 'POST',
        url: `/v1/collections/${col}/records`,
        headers: { 'content-type': contentType, ...(origin === undefined ? {} : { origin }) },
        payload: body,
      });
      seen.add(response.statusCode);
      expect([201, 400, 403, 413, 415, 422], response.body).toContain(response.statusCode);
      const answer = JSON.parse(response.body);
      if (response.statusCode !== 201) {
        expect(answer.error.requestId).toBe(response.headers['x-request-id']);
        return;
      }
      expect(answer.data).toBeUndefined();
      const honeypot = (() => {
        const sent = JSON.parse(String(body)).data as Record<string, unknown>;
        return Object.hasOwn(sent, 'website') && sent.website !== '' && sent.website !== null;
      })();
      if (!honeypot) stored += 1;
    }), { numRuns: 80, seed: 20261129 });
    expect(seen.has(201) && [...seen].some((status) => status >= 400)).toBe(true);
    expect((await owner.get(`/v1/collections/${col}/records?limit=1000`)).body.data).toHaveLength(stored);
    expectPrototypesUntouched();
  }, 120_000);
});
