import pg from 'pg';
import { startPgBouncer } from '../test/support/pgbouncer.ts';
import { dropsNotifications } from '../src/db/listen-probe.ts';
const b = await startPgBouncer({ poolMode: 'transaction', poolSize: 4, upstream: 'postgres://postgres@127.0.0.1:5432/postgres' });
console.log(b.url);
const c = new pg.Client({ connectionString: b.url }); await c.connect(); console.log((await c.query('select 1 as x')).rows); await c.end();
let t = Date.now(); console.log('pooler drops', await dropsNotifications(b.url), Date.now() - t);
t = Date.now(); console.log('direct drops', await dropsNotifications('postgres://postgres@127.0.0.1:5432/postgres'), Date.now() - t);
await b.stop(); console.log(b.log().slice(0, 500));
