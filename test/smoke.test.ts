import { afterEach, beforeEach, expect, it } from 'vitest';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';
import { signedInOwner } from './support/client.js';

describeEachEngine('smoke', (engine) => {
  let t: TestApp;
  beforeEach(async () => { t = await startTestApp(engine); });
  afterEach(async () => { await t.close(); });

  it('signs in and lists members', async () => {
    const owner = await signedInOwner(t);
    const members = await owner.get('/v1/members');
    expect(members.status).toBe(200);
    expect(members.body.data).toHaveLength(1);
    expect(members.body.data[0].role).toBe('owner');
  });
});
