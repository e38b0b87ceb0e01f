import { afterEach, beforeEach, expect, it } from 'vitest';
import { Client, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

describeEachEngine('keys walkthrough', (engine) => {
  let t: TestApp;
  beforeEach(async () => { t = await startTestApp(engine); });
  afterEach(async () => { await t.close(); });

  it('restricted key reads its collection, is refused elsewhere, rotates with grace, revokes, shrinks on demotion', async () => {
    const owner = await signedInOwner(t);
    await owner.post('/v1/collections', { name: 'leads' });
    await owner.post('/v1/collections', { name: 'other' });
    const { body: rec } = await owner.post('/v1/collections/leads/records', { data: { n: 1 } });
    const created = await owner.post('/v1/keys', { name: 'reader', scopes: ['records:read'], collections: ['leads'] });
    expect(created.status).toBe(201);
    expect(created.body.secret).toMatch(/^pb_live_[0-9a-z]{26}_[0-9A-Za-z]{49}$/);
    const key = new Client(t);
    const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });

    expect((await key.get(`/v1/collections/leads/records/${rec.id}`, bearer(created.body.secret))).status).toBe(200);
    const elsewhere = await key.get('/v1/collections/other', bearer(created.body.secret));
    expect(elsewhere.body.error.code).toBe('COLLECTION_NOT_ALLOWED');
    expect((await key.post('/v1/collections/leads/records', { data: {} }, bearer(created.body.secret))).body.error.code).toBe('MISSING_SCOPE');
    expect((await key.get('/v1/members', bearer(created.body.secret))).body.error.code).toBe('PERSON_REQUIRED');
    const listed = await key.get('/v1/collections', bearer(created.body.secret));
    expect(listed.body.data.map((c: any) => c.name)).toEqual(['leads']);

    const rotated = await owner.post(`/v1/keys/${created.body.id}/rotate`, { gracePeriodSeconds: 3600 });
    expect(rotated.status).toBe(200);
    expect((await key.get('/v1/me', bearer(created.body.secret))).status).toBe(200);
    expect((await key.get('/v1/me', bearer(rotated.body.secret))).status).toBe(200);
    t.clock.advance(3600_000 + 1);
    expect((await key.get('/v1/me', bearer(created.body.secret))).body.error.code).toBe('INVALID_API_KEY');
    expect((await key.get('/v1/me', bearer(rotated.body.secret))).status).toBe(200);

    await owner.post(`/v1/keys/${created.body.id}/revoke`);
    expect((await key.get('/v1/me', bearer(rotated.body.secret))).body.error.code).toBe('INVALID_API_KEY');
  });
});
