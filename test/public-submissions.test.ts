import { afterEach, beforeEach, expect, it } from 'vitest';
import { allAuditEntries, Client, expectError, inNewWorkspace, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

const PAGE = 'https://forms.example.com';

describeEachEngine('public submissions', (engine) => {
  let t: TestApp;
  let owner: Client;
  let anonymous: Client;
  beforeEach(async () => {
    t = await startTestApp(engine);
    owner = await signedInOwner(t);
    anonymous = new Client(t);
  });
  afterEach(async () => { await t.close(); });

  async function formCollection(settings: Record<string, unknown> = {}, name = 'signups', by: Client = owner): Promise<string> {
    const created = await by.post('/v1/collections', { name, settings: { submissions: { enabled: true, origins: [PAGE], ...settings } } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.id;
  }

  it('takes a record without a credential and answers its summary only', async () => {
    const col = await formCollection();
    const reply = await anonymous.post(`/v1/collections/${col}/records`, { data: { email: 'a@example.com' } }, { origin: PAGE });
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    expect(Object.keys(reply.body).sort()).toEqual(['collectionId', 'createdAt', 'files', 'id', 'revision', 'trashedAt', 'updatedAt']);
    expect(reply.body.collectionId).toBe(col);
    expect(reply.headers.etag).toBeUndefined();
    expect(reply.headers['access-control-allow-origin']).toBe(PAGE);
    expect(reply.headers['access-control-allow-credentials']).toBeUndefined();
    // Without an Origin header (a server, curl) too.
    expect((await anonymous.post(`/v1/collections/${col}/records`, { data: { email: 'b@example.com' } })).status).toBe(201);

    const stored = await owner.get(`/v1/collections/${col}/records/${reply.body.id}`);
    expect(stored.body.data).toEqual({ email: 'a@example.com' });
    const audit = await allAuditEntries(owner, 'action=record.created');
    expect(audit).toHaveLength(2);
    expect(audit[0].actor).toEqual({ type: 'anonymous', id: null, name: null, ip: '127.0.0.1' });
  });
});
