/**
 * The baseline of bench/data-api.ts: the least a Fastify + better-sqlite3 service can do for the
 * same three calls. No auth, no transaction, no events, no schema check: one statement per request.
 * It stores records the way Plainbase does (text ULID ids with a prefix, JSON text, ISO timestamps,
 * the same indexes on the records table) so the difference measured is Plainbase's own work.
 *
 * Env: BASELINE_PORT, BASELINE_DB (file path), BASELINE_SEED (records inserted at start, with
 * the status index already in place, as Plainbase's import does).
 */
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import { monotonicFactory } from 'ulid';
import { benchRecord } from './support/records.js';

const port = Number(process.env.BASELINE_PORT ?? 8090);
const file = process.env.BASELINE_DB ?? 'baseline.db';
const seedCount = Number(process.env.BASELINE_SEED ?? 0);
const COLLECTION = 'col_baseline';

const db = new Database(file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec(`
  create table if not exists records (
    id text primary key,
    collection_id text not null,
    data text not null,
    created_at text not null,
    updated_at text not null
  );
  create index if not exists records_collection on records (collection_id, id);
  create index if not exists records_status on records (collection_id, json_extract(data, '$.status'), id);
`);

const nextUlid = monotonicFactory();
const newId = (now: number) => `rec_${nextUlid(now).toLowerCase()}`;

const insert = db.prepare('insert into records (id, collection_id, data, created_at, updated_at) values (?, ?, ?, ?, ?)');
const byId = db.prepare('select id, data, created_at, updated_at from records where collection_id = ? and id = ?');
const byStatus = db.prepare(
  "select id, data, created_at, updated_at from records where collection_id = ? and json_extract(data, '$.status') = ? order by id limit ?",
);

interface Row {
  id: string;
  data: string;
  created_at: string;
  updated_at: string;
}
const view = (row: Row) => ({ id: row.id, data: JSON.parse(row.data) as unknown, createdAt: row.created_at, updatedAt: row.updated_at });

let seedSeconds = 0;
if (seedCount > 0) {
  const started = process.hrtime.bigint();
  const batch = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const now = Date.now();
      const at = new Date(now).toISOString();
      insert.run(newId(now), COLLECTION, JSON.stringify(benchRecord(i)), at, at);
    }
  });
  for (let from = 0; from < seedCount; from += 10_000) batch(from, Math.min(seedCount, from + 10_000));
  seedSeconds = Number(process.hrtime.bigint() - started) / 1e9;
}

const app = Fastify({ logger: false });

app.get('/readyz', async () => ({ status: 'ready' }));
app.get('/info', async () => ({ seeded: seedCount, seedSeconds }));

app.post<{ Body: { data?: unknown } }>('/records', async (request, reply) => {
  const data = request.body?.data;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return reply.status(400).send({ error: 'data must be an object' });
  const now = Date.now();
  const at = new Date(now).toISOString();
  const id = newId(now);
  insert.run(id, COLLECTION, JSON.stringify(data), at, at);
  return reply.status(201).send({ id, data, createdAt: at, updatedAt: at });
});

app.get<{ Params: { id: string } }>('/records/:id', async (request, reply) => {
  const row = byId.get(COLLECTION, request.params.id) as Row | undefined;
  if (!row) return reply.status(404).send({ error: 'not found' });
  return view(row);
});

const updateData = db.prepare('update records set data = ?, updated_at = ? where collection_id = ? and id = ?');
app.patch<{ Params: { id: string }; Body: { data?: Record<string, unknown> } }>('/records/:id', async (request, reply) => {
  const row = byId.get(COLLECTION, request.params.id) as Row | undefined;
  if (!row) return reply.status(404).send({ error: 'not found' });
  const at = new Date().toISOString();
  const data = { ...(JSON.parse(row.data) as Record<string, unknown>), ...request.body?.data };
  updateData.run(JSON.stringify(data), at, COLLECTION, row.id);
  return view({ ...row, data: JSON.stringify(data), updated_at: at });
});

app.get<{ Querystring: { status?: string; limit?: string } }>('/records', async (request) => {
  const limit = Math.min(1000, Math.max(1, Number(request.query.limit ?? 50)));
  const rows = byStatus.all(COLLECTION, request.query.status ?? '', limit) as Row[];
  return { data: rows.map(view), nextCursor: rows.length === limit ? rows[rows.length - 1]!.id : null };
});

const stop = async () => {
  await app.close();
  db.close();
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());

await app.listen({ port, host: '127.0.0.1' });
