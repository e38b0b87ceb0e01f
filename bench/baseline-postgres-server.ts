/**
 * The PostgreSQL baseline of bench/data-api.ts: the least a Fastify + pg service can do for the
 * same three calls. No auth, no transaction, no events, no schema check: one statement per request
 * over a pool of the size Plainbase uses (BASELINE_POOL, 10 by default, like
 * PLAINBASE_DATABASE_POOL_SIZE), over TCP as Plainbase connects. It stores records the way
 * Plainbase does on PostgreSQL (text ids, jsonb data, ISO timestamps, an index per collection and
 * id, and one on the status field) so the difference measured is Plainbase's own work.
 *
 * Env: BASELINE_PORT, BASELINE_PG_URL (a database of its own), BASELINE_SEED (records inserted
 * at start, in SQL, with the indexes in place, as Plainbase's import does), BASELINE_POOL.
 */
import Fastify from 'fastify';
import pg from 'pg';
import { monotonicFactory } from 'ulid';
import { STATUSES } from './support/records.js';

const port = Number(process.env.BASELINE_PORT ?? 8091);
const seedCount = Number(process.env.BASELINE_SEED ?? 0);
const COLLECTION = 'col_baseline';

const pool = new pg.Pool({ connectionString: process.env.BASELINE_PG_URL, max: Number(process.env.BASELINE_POOL ?? 10) });
await pool.query(`
  create table if not exists records (
    id text primary key,
    collection_id text not null,
    data jsonb not null,
    created_at text not null,
    updated_at text not null
  );
  create index if not exists records_collection on records (collection_id, id);
  create index if not exists records_status on records (collection_id, (data->>'status'), id);
`);

const nextUlid = monotonicFactory();
const newId = (now: number) => `rec_${nextUlid(now).toLowerCase()}`;

let seedSeconds = 0;
if (seedCount > 0) {
  const started = process.hrtime.bigint();
  // The same records as bench/support/records.ts benchRecord(i), built in SQL in 100,000-row statements.
  for (let from = 0; from < seedCount; from += 100_000) {
    const to = Math.min(seedCount, from + 100_000);
    await pool.query(
      `insert into records (id, collection_id, data, created_at, updated_at)
       select 'rec_seed' || lpad(i::text, 22, '0'), $1,
         jsonb_build_object('status', 's' || (i % ${STATUSES}), 'n', i, 'name', 'record ' || i || ' of the benchmark'),
         $2, $2
       from generate_series($3::int, $4::int - 1) as i`,
      [COLLECTION, new Date().toISOString(), from, to],
    );
  }
  await pool.query('analyze records');
  seedSeconds = Number(process.hrtime.bigint() - started) / 1e9;
}

interface Row {
  id: string;
  data: unknown;
  created_at: string;
  updated_at: string;
}
const view = (row: Row) => ({ id: row.id, data: row.data, createdAt: row.created_at, updatedAt: row.updated_at });

const app = Fastify({ logger: false });

app.get('/readyz', async () => ({ status: 'ready' }));
app.get('/info', async () => ({ seeded: seedCount, seedSeconds }));

app.post<{ Body: { data?: unknown } }>('/records', async (request, reply) => {
  const data = request.body?.data;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return reply.status(400).send({ error: 'data must be an object' });
  const now = Date.now();
  const at = new Date(now).toISOString();
  const id = newId(now);
  await pool.query('insert into records (id, collection_id, data, created_at, updated_at) values ($1, $2, $3, $4, $4)', [id, COLLECTION, JSON.stringify(data), at]);
  return reply.status(201).send({ id, data, createdAt: at, updatedAt: at });
});

app.get<{ Params: { id: string } }>('/records/:id', async (request, reply) => {
  const { rows } = await pool.query<Row>('select id, data, created_at, updated_at from records where collection_id = $1 and id = $2', [COLLECTION, request.params.id]);
  if (!rows[0]) return reply.status(404).send({ error: 'not found' });
  return view(rows[0]);
});

app.patch<{ Params: { id: string }; Body: { data?: Record<string, unknown> } }>('/records/:id', async (request, reply) => {
  const { rows } = await pool.query<Row>(
    'update records set data = data || $3::jsonb, updated_at = $4 where collection_id = $1 and id = $2 returning id, data, created_at, updated_at',
    [COLLECTION, request.params.id, JSON.stringify(request.body?.data ?? {}), new Date().toISOString()],
  );
  if (!rows[0]) return reply.status(404).send({ error: 'not found' });
  return view(rows[0]);
});

app.get<{ Querystring: { status?: string; limit?: string } }>('/records', async (request) => {
  const limit = Math.min(1000, Math.max(1, Number(request.query.limit ?? 50)));
  const { rows } = await pool.query<Row>(
    "select id, data, created_at, updated_at from records where collection_id = $1 and data->>'status' = $2 order by id limit $3",
    [COLLECTION, request.query.status ?? '', limit],
  );
  return { data: rows.map(view), nextCursor: rows.length === limit ? rows[rows.length - 1]!.id : null };
});

const stop = async () => {
  await app.close();
  await pool.end();
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());

await app.listen({ port, host: '127.0.0.1' });
