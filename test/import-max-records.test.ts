import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { signedInOwner, type Client } from './support/client.js';
import { outbox } from './support/events.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/**
 * PLAINBASE_IMPORT_MAX_RECORDS bounds how many records (and so outbox events) one import may
 * bring in: a body of tiny lines (`{}`) cannot put millions of events in flight. Over the cap the
 * import answers 413 naming the setting and keeps nothing, in both modes; at the cap it is kept.
 * The cap is set small here (7), with rows spread over more than one 2,000-row batch in the
 * second case so that a batch already written is rolled back too.
 */
const NDJSON = 'application/x-ndjson';
const lines = (count: number) => '{}\n'.repeat(count);

describeEachEngine('records per import', (engine) => {
  let t: TestApp;
  let owner: Client;
  const importBody = (body: string, query = '') => owner.call('POST', `/v1/collections/leads/import${query}`, body, { 'content-type': NDJSON });
  const recordCount = async () => Number((await t.deps.db.selectFrom('records').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

  afterEach(async () => { await t?.close(); });

  describe('a small cap', () => {
    beforeEach(async () => {
      t = await startTestApp(engine, { importMaxRecords: 7 });
      owner = await signedInOwner(t);
      expect((await owner.post('/v1/collections', { name: 'leads' })).status).toBe(201);
    });

    it('keeps an import of exactly the cap', async () => {
      const answer = await importBody(lines(7));
      expect(answer.status).toBe(200);
      expect(answer.body.imported).toBe(7);
      expect(await recordCount()).toBe(7);
    });

    it('answers 413 naming the setting past it, and keeps nothing, in both modes', async () => {
      for (const query of ['', '?mode=partial']) {
        const answer = await importBody(lines(8), query);
        expect(answer.status).toBe(413);
        expect(answer.body.error.code).toBe('PAYLOAD_TOO_LARGE');
        expect(answer.body.error.message).toContain('PLAINBASE_IMPORT_MAX_RECORDS');
        expect(answer.body.error.details).toEqual({ limitRecords: 7 });
      }
      expect(await recordCount()).toBe(0);
      expect((await outbox(t)).filter((event) => event.type === 'record.created')).toEqual([]);
    });

    it('counts only kept rows: refused rows in partial mode do not count', async () => {
      const answer = await importBody('"not an object"\n'.repeat(5) + lines(7), '?mode=partial');
      expect(answer.status).toBe(200);
      expect(answer.body.imported).toBe(7);
    });
  });

  it('rolls back batches already written when the cap is passed after them', async () => {
    t = await startTestApp(engine, { importMaxRecords: 4_500 });
    owner = await signedInOwner(t);
    expect((await owner.post('/v1/collections', { name: 'leads' })).status).toBe(201);
    const answer = await importBody(lines(4_501));
    expect(answer.status).toBe(413);
    expect(await recordCount()).toBe(0);
    expect((await outbox(t)).filter((event) => event.type === 'record.created')).toEqual([]);
  });
});
