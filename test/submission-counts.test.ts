import { afterEach, beforeEach, expect, it } from 'vitest';
import { flushSubmissionCounts } from '../src/modules/submissions/submission-counts.js';
import { Client, expectError, inNewWorkspace, KeyClient, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, startTestAppBeside, type TestApp } from './support/harness.js';

const PAGE = 'https://forms.example.com';
const HOUR = 3_600_000;
const NONE = { ORIGIN_NOT_ALLOWED: 0, RATE_LIMITED: 0, CAPTCHA_FAILED: 0, HONEYPOT: 0, TOO_LARGE: 0, INVALID: 0 };

describeEachEngine('submission counts', (engine) => {
  let t: TestApp;
  let owner: Client;
  let col: string;
  beforeEach(async () => {
    // The clock starts at 10:00:00 UTC.
    t = await startTestApp(engine, { submissionMaxBytes: 1024 });
    owner = await signedInOwner(t);
    col = (await owner.post('/v1/collections', { name: 'signups', settings: { submissions: { enabled: true, origins: [PAGE], ratePerMinute: 7, honeypot: 'website' } } })).body.id;
    expect((await owner.post(`/v1/collections/${col}/schemas`, { schema: { type: 'object', properties: { n: { type: 'integer' } } } })).status).toBe(201);
    expect((await owner.post(`/v1/collections/${col}/schemas/1/activate`)).status).toBe(200);
  });
  afterEach(async () => { await t.close(); });

  const submit = (body: unknown, headers: Record<string, string> = { origin: PAGE }, address = '198.51.100.1') =>
    Object.assign(new Client(t), { remoteAddress: address }).post(`/v1/collections/${col}/records`, body, headers);
  const chart = async (by: Client = owner) => {
    const reply = await by.get(`/v1/collections/${col}/submissions`);
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return reply.body;
  };
  const storedRows = () => t.deps.db.selectFrom('submission_counts').selectAll().execute();

  it('counts accepted and refused submissions by reason, in the current hour, written or not', async () => {
    expect((await submit({ data: { n: 1 } })).status).toBe(201);
    expect((await submit({ data: { n: 2 } }, {})).status).toBe(201);
    expect((await submit({ data: { n: 3 } }, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await submit({ data: { n: 'x' } })).status).toBe(422);
    expect((await submit('{"data":', { origin: PAGE })).status).toBe(400);
    expect((await submit({ data: { n: 4, website: 'spam' } })).status).toBe(201);
    expect((await submit({ data: { text: 'x'.repeat(2000) } })).status).toBe(413);
    // Seven per minute from one address: six used so far (only the origin refusal came before the count), one left.
    expect((await submit({ data: { n: 5 } })).status).toBe(201);
    expect((await submit({ data: { n: 6 } })).status).toBe(429);
    // Requests that reach no collection taking submissions count nowhere.
    expect((await new Client(t).post('/v1/collections/col_00000000000000000000000000/records', { data: {} })).status).toBe(401);

    const expected = { accepted: 3, refused: 6, refusedBy: { ...NONE, ORIGIN_NOT_ALLOWED: 1, INVALID: 2, HONEYPOT: 1, TOO_LARGE: 1, RATE_LIMITED: 1 } };
    const before = await chart();
    expect(before).toMatchObject({ collectionId: col, ...expected });
    expect(before.hours).toHaveLength(24);
    expect(before.hours[23]).toEqual({ hour: '2026-11-22T10:00:00.000Z', accepted: 3, refused: 6 });
    expect(before.hours[0].hour).toBe('2026-11-21T11:00:00.000Z');
    expect(before.hours.slice(0, 23).every((hour: any) => hour.accepted === 0 && hour.refused === 0)).toBe(true);
    expect(await storedRows()).toEqual([]);

    // Written: one row for the collection and hour; the answer is the same, nothing counted twice.
    await flushSubmissionCounts(t.deps);
    expect(await storedRows()).toHaveLength(1);
    expect(await chart()).toEqual(before);
    // Another process sees what was written.
    const beside = await startTestAppBeside(t);
    try {
      const other = new Client(beside);
      other.cookie = owner.cookie;
      other.workspaceId = owner.workspaceId;
      expect(await chart(other)).toEqual(before);
    } finally {
      await beside.close();
    }
  });

  it('turns a flood of refusals into one write per collection and hour', async () => {
    const flood = await Promise.all(Array.from({ length: 60 }, () => submit({ data: {} }, { origin: 'https://evil.example' })));
    expect(flood.every((reply) => reply.status === 403)).toBe(true);
    await flushSubmissionCounts(t.deps);
    const rows = await storedRows();
    expect(rows).toHaveLength(1);
    expect(Number(rows[0]!.origin_not_allowed)).toBe(60);
    // More of them later in the same hour add to that row.
    for (let i = 0; i < 3; i += 1) await submit({ data: {} }, { origin: 'https://evil.example' });
    await flushSubmissionCounts(t.deps);
    expect((await storedRows()).map((row) => Number(row.origin_not_allowed))).toEqual([63]);
  });

  it('places counts in their hours, keeps 24 in the chart and 7 days in the table', async () => {
    // A key: a session would end in the days the clock moves.
    const reader = new KeyClient(t, (await owner.post('/v1/keys', { name: 'reader', scopes: ['collections:read'] })).body.secret);
    await submit({ data: { n: 1 } });
    await flushSubmissionCounts(t.deps);
    t.clock.advance(HOUR + 5 * 60_000);
    await submit({ data: { n: 2 } });
    await submit({ data: { n: 3 } });
    let body = await chart(reader);
    expect(body.hours.slice(-2)).toEqual([
      { hour: '2026-11-22T10:00:00.000Z', accepted: 1, refused: 0 },
      { hour: '2026-11-22T11:00:00.000Z', accepted: 2, refused: 0 },
    ]);
    expect(body.accepted).toBe(3);

    // A day later the first hours have left the chart but not the table.
    t.clock.advance(23 * HOUR);
    await flushSubmissionCounts(t.deps);
    body = await chart(reader);
    expect(body.hours[0].hour).toBe('2026-11-22T11:00:00.000Z');
    expect(body.hours[0].accepted).toBe(2);
    expect(body.accepted).toBe(2);
    expect(await storedRows()).toHaveLength(2);
    // After 7 days they are deleted when counts are next written.
    t.clock.advance(7 * 24 * HOUR);
    await flushSubmissionCounts(t.deps);
    expect(await storedRows()).toHaveLength(2);
    await submit({ data: {} }, { origin: 'https://evil.example' });
    await flushSubmissionCounts(t.deps);
    expect((await storedRows()).map((row) => row.hour)).toEqual(['2026-11-30T10:00:00.000Z']);
    expect(await chart(reader)).toMatchObject({ accepted: 0, refused: 1 });
  });

  it('answers to collections:read in the workspace only, and forgets a collection deleted for good', async () => {
    await submit({ data: { n: 1 } });
    await submit({ data: {} }, { origin: 'https://evil.example' });
    const key = (await owner.post('/v1/keys', { name: 'reader', scopes: ['records:read'] })).body.secret;
    expect((await new KeyClient(t, key).get(`/v1/collections/${col}/submissions`)).body).toMatchObject({ accepted: 1, refused: 1 });
    expectError(await new Client(t).get(`/v1/collections/${col}/submissions`), 401, 'UNAUTHENTICATED');
    const second = await inNewWorkspace(t, owner, 'Second');
    expectError(await second.get(`/v1/collections/${col}/submissions`), 404, 'NOT_FOUND');
    const theirs = (await second.post('/v1/collections', { name: 'signups' })).body.id;
    expect((await second.get(`/v1/collections/${theirs}/submissions`)).body).toMatchObject({ collectionId: theirs, accepted: 0, refused: 0, refusedBy: NONE });

    await flushSubmissionCounts(t.deps);
    await submit({ data: { n: 2 } });
    expect(await storedRows()).toHaveLength(1);
    expect((await owner.delete(`/v1/collections/${col}?permanent=true`)).status).toBe(204);
    await flushSubmissionCounts(t.deps);
    expect(await storedRows()).toEqual([]);
    expect(t.deps.services.submissionCounts.pending.size).toBe(0);
  });

  it('writes what is counted when the app closes', async () => {
    await submit({ data: { n: 1 } });
    const beside = await startTestAppBeside(t);
    await new Client(beside).post(`/v1/collections/${col}/records`, { data: { n: 2 } }, { origin: PAGE });
    await beside.close();
    expect((await storedRows()).map((row) => Number(row.accepted))).toEqual([1]);
    expect((await chart()).accepted).toBe(2);
  });
});
