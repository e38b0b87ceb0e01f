import { afterEach, expect, it } from 'vitest';
import { IDEMPOTENCY_WINDOW_MS } from '../src/modules/idempotency/idempotency.js';
import { purgeExpired } from '../src/modules/housekeeping/purge-expired.js';
import { Housekeeper } from '../src/worker/housekeeping.js';
import { addMember, inNewWorkspace, signedInOwner, type Client } from './support/client.js';
import { describeEachEngine, startTestApp, startTestAppBeside, type TestApp } from './support/harness.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** A round's counts when it deleted nothing: every kind housekeeping purges. */
const NOTHING_PURGED = {
  idempotencyAnswers: 0, sessions: 0, invites: 0, recordVersions: 0, deliveryAttempts: 0, finishedDeliveries: 0, heldDeliveries: 0, deliveredEvents: 0,
};

/**
 * Housekeeping (docs/operations.md): expired idempotency answers, sessions and invites are
 * purged in batches, judged by each row's own times with a clock the test moves, the same in
 * every workspace, by one process at a time.
 */
describeEachEngine('housekeeping', (engine) => {
  const opened: TestApp[] = [];
  afterEach(async () => {
    for (const app of opened.splice(0).reverse()) await app.close();
  });
  const start = async (overrides: Parameters<typeof startTestApp>[1] = {}) => {
    const t = await startTestApp(engine, overrides);
    opened.push(t);
    return t;
  };

  const storedAnswers = async (t: TestApp, client: Client) =>
    (await t.deps.db.selectFrom('idempotency_keys').select('key').where('workspace_id', '=', client.workspaceId!).orderBy('key').execute()).map((row) => row.key);
  const inviteEmails = async (t: TestApp, client: Client) =>
    (await t.deps.db.selectFrom('invites').select('email').where('workspace_id', '=', client.workspaceId!).orderBy('email').execute()).map((row) => row.email);
  const sessionsOf = async (t: TestApp, client: Client & { personId: string }) =>
    Number((await t.deps.db.selectFrom('sessions').select((eb) => eb.fn.countAll().as('n')).where('person_id', '=', client.personId).executeTakeFirstOrThrow()).n);

  it('purges what is past its time and keeps what is not, in both workspaces alike', async () => {
    const t = await start({ sessionTtlSeconds: 30 * 24 * 3600, sessionIdleSeconds: 36 * 3600 });
    const owner = await signedInOwner(t);
    const second = await inNewWorkspace(t, owner, 'second');
    const workspaces = [owner, second] as const;
    const create = async (client: Client, key: string) => {
      const reply = await client.post('/v1/collections/leads/records', { data: { key } }, { 'idempotency-key': key });
      expect(reply.status).toBe(201);
      return reply.body.id as string;
    };
    const invite = async (client: Client, email: string) => expect((await client.post('/v1/invites', { email, role: 'viewer' })).status).toBe(201);
    for (const [index, client] of workspaces.entries()) {
      expect((await client.post('/v1/collections', { name: 'leads' })).status).toBe(201);
      await create(client, `old-${index}`);
      await invite(client, `old-${index}@example.com`);
    }
    const active = [await addMember(t, owner, 'active-0@example.com', 'editor'), await addMember(t, second, 'active-1@example.com', 'editor')];
    const idle = [await addMember(t, owner, 'idle-0@example.com', 'editor'), await addMember(t, second, 'idle-1@example.com', 'editor')];

    t.clock.advance(23 * HOUR);
    const newIds = [await create(owner, 'new-0'), await create(second, 'new-1')];
    for (const member of active) expect((await member.get('/v1/me')).status).toBe(200);

    // A day and a minute on: the first answers are past their window, the later ones are not.
    t.clock.advance(HOUR + MINUTE);
    let round = await purgeExpired(t.deps);
    expect(round).toMatchObject({ claimed: true, purged: { idempotencyAnswers: 2, sessions: 0, invites: 0 } });
    expect(await storedAnswers(t, owner)).toEqual(['new-0']);
    expect(await storedAnswers(t, second)).toEqual(['new-1']);
    // An answer within its window is still replayed, not run again.
    const replay = await owner.post('/v1/collections/leads/records', { data: { key: 'new-0' } }, { 'idempotency-key': 'new-0' });
    expect([replay.status, replay.body.id]).toEqual([201, newIds[0]]);

    // 36 hours unused: the idle members' sessions go; those used at hour 23 stay.
    t.clock.advance(12 * HOUR);
    round = await purgeExpired(t.deps);
    expect(round.purged.sessions).toBe(2);
    for (const member of idle) expect(await sessionsOf(t, member)).toBe(0);
    for (const member of active) {
      expect(await sessionsOf(t, member)).toBe(1);
      expect((await member.get('/v1/me')).status).toBe(200);
    }
    for (const [index, client] of workspaces.entries()) await invite(client, `new-${index}@example.com`);

    // A week after the first invites (accepted or not), they are gone; the later ones stay.
    t.clock.advance(7 * DAY - 36 * HOUR);
    round = await purgeExpired(t.deps);
    expect(round.purged.invites).toBe(6);
    expect(await inviteEmails(t, owner)).toEqual(['new-0@example.com']);
    expect(await inviteEmails(t, second)).toEqual(['new-1@example.com']);
    // Nothing left to purge: a second round deletes nothing.
    expect((await purgeExpired(t.deps)).purged).toEqual(NOTHING_PURGED);
  });

  it('purges sessions past their lifetime when they never idle out', async () => {
    const t = await start({ sessionTtlSeconds: 48 * 3600, sessionIdleSeconds: 0 });
    const owner = await signedInOwner(t);
    const member = await addMember(t, owner, 'member@example.com', 'editor');
    t.clock.advance(24 * HOUR);
    expect((await member.signIn('member@example.com', 'member password 1')).status).toBe(200);
    t.clock.advance(24 * HOUR);
    expect((await purgeExpired(t.deps)).purged.sessions).toBe(2);
    expect(await sessionsOf(t, owner)).toBe(0);
    expect(await sessionsOf(t, member)).toBe(1);
    expect((await member.get('/v1/me')).status).toBe(200);
  });

  it('works through many rows in batches of at most the batch size', async () => {
    const t = await start();
    const owner = await signedInOwner(t);
    const second = await inNewWorkspace(t, owner, 'second');
    await insertAnswers(t, [owner, second], 1250, t.clock.now());
    t.clock.advance(IDEMPOTENCY_WINDOW_MS);
    await insertAnswers(t, [owner, second], 5, t.clock.now(), 'fresh');
    t.clock.advance(MINUTE);
    const round = await purgeExpired(t.deps, 400);
    expect(round.purged.idempotencyAnswers).toBe(2500);
    expect(round.largestBatch).toBeLessThanOrEqual(400);
    // 2,510 answers in ranges of 400: at least 7 transactions for them, each short.
    expect(round.batches).toBeGreaterThanOrEqual(7);
    expect((await storedAnswers(t, owner)).length).toBe(5);
    expect((await storedAnswers(t, second)).length).toBe(5);
  });

  it('runs in the worker at start, and stops', async () => {
    const t = await start();
    const owner = await signedInOwner(t);
    await insertAnswers(t, [owner], 3, t.clock.now());
    t.clock.advance(IDEMPOTENCY_WINDOW_MS + MINUTE);
    const logged: unknown[] = [];
    const housekeeper = new Housekeeper(t.deps, { info: (details) => logged.push(details), warn: ({ err }) => logged.push(err) });
    housekeeper.start();
    try {
      await waitFor(async () => (await storedAnswers(t, owner)).length === 0);
      await waitFor(async () => logged.length > 0);
    } finally {
      await housekeeper.stop();
    }
    expect(logged).toEqual([{ purged: { ...NOTHING_PURGED, idempotencyAnswers: 3 }, batches: expect.any(Number) }]);
  });

  if (engine === 'postgres') {
    it('two processes on one database purge together without errors, each row once; a held lock leaves the round to its holder', async () => {
      const t = await start();
      const other = await startTestAppBeside(t);
      opened.push(other);
      const owner = await signedInOwner(t);
      const second = await inNewWorkspace(t, owner, 'second');
      await insertAnswers(t, [owner, second], 1500, t.clock.now());
      t.clock.advance(IDEMPOTENCY_WINDOW_MS + MINUTE);
      await insertAnswers(t, [owner, second], 3, t.clock.now(), 'fresh');

      // While one process holds the lock, the other deletes nothing and says so.
      await t.deps.db.transaction().execute(async (trx) => {
        const { rows } = await t.deps.dialect.housekeepingLock!.execute(trx);
        expect(rows[0]?.claimed).toBe(true);
        const refused = await purgeExpired(other.deps, 100);
        expect(refused).toMatchObject({ claimed: false, batches: 0 });
      });
      expect((await storedAnswers(t, owner)).length).toBe(1503);

      const rounds = await Promise.all([purgeExpired(t.deps, 100), purgeExpired(other.deps, 100), purgeExpired(t.deps, 100)]);
      // Whatever rounds gave way, a last one finishes what they left.
      rounds.push(await purgeExpired(other.deps, 100));
      expect(rounds.reduce((sum, round) => sum + round.purged.idempotencyAnswers!, 0)).toBe(3000);
      expect(rounds.at(-1)!.claimed).toBe(true);
      expect((await storedAnswers(t, owner)).length).toBe(3);
      expect((await storedAnswers(t, second)).length).toBe(3);
    });
  }
});

/** `count` stored answers per workspace, written at `at`, straight into the table. */
async function insertAnswers(t: TestApp, workspaces: readonly Client[], count: number, at: Date, prefix = 'old'): Promise<void> {
  for (const client of workspaces) {
    const rows = Array.from({ length: count }, (_, index) => ({
      workspace_id: client.workspaceId!,
      caller_id: 'per_test',
      key: `${prefix}-${String(index).padStart(5, '0')}`,
      request_hash: 'x',
      status: 201,
      body: '{}',
      created_at: at.toISOString(),
    }));
    for (let i = 0; i < rows.length; i += 500) await t.deps.db.insertInto('idempotency_keys').values(rows.slice(i, i + 500)).execute();
  }
}

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
