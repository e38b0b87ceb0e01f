import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Client, expectError, inNewWorkspace, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/**
 * The attack an outside test found: an anonymous filter of 100 `~` terms on a public collection
 * of 50,000 records took 10.8 s, and other workspaces' requests waited as long (SQLite, where a
 * statement holds the event loop). Scaled down here to stay fast: 2,000 records of 1 KB and budgets of
 * 100 ms make the same shape. What matters is the ratio, not the size: the unbounded statement
 * takes several times the budget (logged below), so without the budget each request would hold
 * the database for all of it; and 12 requests of a budget each (1.2 s) are more than the 1 s
 * another workspace may wait, so without lanes the queue alone would break that bound too.
 */
const RECORDS = 2000;
const PUBLIC_BUDGET_MS = 100;
const TERMS = 100;
const SLOW_FILTER = Array.from({ length: TERMS }, (_, i) => `data.text ~ "zq${String(i).padStart(3, '0')}"`).join(' || ');

describeEachEngine('query time budget', (engine) => {
  let t: TestApp;
  let owner: Client;
  let other: Client;
  let anonymous: Client;
  let posts: string;

  beforeAll(async () => {
    // The pool size the harness opens on PostgreSQL, so that the lanes are sized from the real pool.
    t = await startTestApp(engine, { publicQueryTimeMs: PUBLIC_BUDGET_MS, queryTimeMs: 60_000, databasePoolSize: 5 });
    owner = await signedInOwner(t);
    other = await inNewWorkspace(t, owner, 'other');
    anonymous = new Client(t);
    posts = (await owner.post('/v1/collections', { name: 'posts', public: true })).body.id;
    const filler = 'lorem ipsum dolor sit amet '.repeat(40);
    const lines = Array.from({ length: RECORDS }, (_, i) => JSON.stringify({ text: `${filler}${i}`, n: i })).join('\n');
    const imported = await owner.call('POST', '/v1/collections/posts/import', lines, { 'content-type': 'application/x-ndjson' });
    expect(imported.status).toBe(200);
    expect((await other.post('/v1/collections', { name: 'notes' })).status).toBe(201);
  });
  afterAll(async () => {
    await t?.close();
  });

  const slowList = (client: Client, extra = '') => client.get(`/v1/collections/${posts}/records?filter=${encodeURIComponent(SLOW_FILTER)}${extra}`);

  /** Runs `work` with the credentialed budget set to `ms` (the config object is the app's own). */
  async function withMemberBudget<T>(ms: number, work: () => Promise<T>): Promise<T> {
    const before = t.deps.config.queryTimeMs;
    t.deps.config.queryTimeMs = ms;
    try {
      return await work();
    } finally {
      t.deps.config.queryTimeMs = before;
    }
  }

  // First: the unbounded run below leaves the owner's lane resting for as long as it ran.
  it('budgets a credentialed filter, sort, count and filtered export with PLAINBASE_QUERY_TIME_MS', async () => {
    await withMemberBudget(100, async () => {
      const details = { limit: 100, setting: 'PLAINBASE_QUERY_TIME_MS' };
      expect(expectError(await slowList(owner), 400, 'INVALID_REQUEST').details).toEqual(details);
      const exported = await owner.get(`/v1/collections/posts/export?filter=${encodeURIComponent(SLOW_FILTER)}`);
      const exportError = expectError(exported, 400, 'INVALID_REQUEST');
      expect(exportError.details).toEqual(details);
      expect(exportError.message).toMatch(/add an index/);
      // Nothing shaped by the caller: the page of an index, not budgeted, whatever the budget.
      const plain = await owner.get('/v1/collections/posts/records?limit=1000');
      expect(plain.status).toBe(200);
      expect(plain.body.data).toHaveLength(1000);
      // A cheap filter and sort fit well within it.
      const cheap = await owner.get(`/v1/collections/posts/records?filter=${encodeURIComponent(`id = "${plain.body.data[0].id}"`)}&sort=-createdAt&count=true`);
      expect(cheap.status).toBe(200);
      expect(cheap.body.total).toBe(1);
    });
  });

  it('stops an anonymous filter past its budget with 400 naming the budget; the same filter with more time answers', async () => {
    const started = performance.now();
    const refused = await slowList(anonymous);
    const refusedMs = performance.now() - started;
    const error = expectError(refused, 400, 'INVALID_REQUEST');
    expect(error.details).toEqual({ limit: PUBLIC_BUDGET_MS, setting: 'PLAINBASE_PUBLIC_QUERY_TIME_MS' });
    expect(error.message).toMatch(/100 ms.*PLAINBASE_PUBLIC_QUERY_TIME_MS.*narrow the filter/);

    // The owner's budget here is a minute: the whole statement runs, and takes several budgets.
    const whole = performance.now();
    const answered = await slowList(owner);
    const wholeMs = performance.now() - whole;
    expect(answered.status).toBe(200);
    expect(answered.body).toMatchObject({ data: [], nextCursor: null });
    console.log(`[query-budget ${engine}] ${TERMS}-term ~ filter over ${RECORDS} records: stopped after ${refusedMs.toFixed(0)} ms; unbounded ${wholeMs.toFixed(0)} ms`);
    expect(wholeMs).toBeGreaterThan(2 * PUBLIC_BUDGET_MS);
    expect(refusedMs).toBeLessThan(wholeMs);
  });

  it('keeps another workspace under 1 s while 12 anonymous slow filters run at once; they get 400 or 429, never 500', async () => {
    let attackOver = false;
    const attack = Promise.all(Array.from({ length: 12 }, () => slowList(anonymous))).finally(() => {
      attackOver = true;
    });
    const latencies: number[] = [];
    let created = 0;
    const timed = async <T>(work: Promise<T>): Promise<T> => {
      const started = performance.now();
      const result = await work;
      latencies.push(performance.now() - started);
      return result;
    };
    while (!attackOver || created < 5) {
      expect((await timed(other.post('/v1/collections/notes/records', { data: { text: `note ${created}` } }))).status).toBe(201);
      // B's own filtered, sorted list has its own lane: A's anonymous callers do not fill it.
      expect((await timed(other.get(`/v1/collections/notes/records?filter=${encodeURIComponent('data.text ~ "note"')}&sort=-createdAt`))).status).toBe(200);
      created += 1;
    }
    const replies = await attack;
    const statuses = replies.map((reply) => reply.status);
    console.log(`[query-budget ${engine}] other workspace: ${created} creates and filtered lists, slowest ${Math.max(...latencies).toFixed(0)} ms; anonymous answers ${statuses.join(',')}`);
    expect(Math.max(...latencies)).toBeLessThan(1000);
    for (const reply of replies) {
      expect([400, 429]).toContain(reply.status);
      if (reply.status === 429) expect(Number(reply.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(['INVALID_REQUEST', 'RATE_LIMITED']).toContain(reply.body.error.code);
    }
    expect(statuses).toContain(400);
    // Workspace B's own records are all there and nothing of A's leaked into them.
    const notes = await other.get('/v1/collections/notes/records?limit=1000&count=true');
    expect(notes.body.total).toBe(created);
  });

  it.runIf(engine === 'postgres')('sets statement_timeout only for its own transaction: no pooled connection keeps it', async () => {
    await slowList(anonymous);
    // As many at once as the pool holds, so every connection answers.
    const settings = await Promise.all(Array.from({ length: 5 }, () =>
      t.deps.db.connection().execute(async (db) => (await sql<{ value: string }>`select current_setting('statement_timeout') as value, pg_sleep(0.02)`.execute(db)).rows[0]!.value)));
    expect(new Set(settings)).toEqual(new Set(['0']));
  });
});
