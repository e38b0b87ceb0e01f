import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../src/app.js';
import { systemClock } from '../src/clock.js';
import { loadConfig } from '../src/config.js';
import { connectStorage } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createOwner } from '../src/modules/people/first-owner.js';
import { authenticateKey } from '../src/modules/keys/authenticate-key.js';

const file = path.join(os.tmpdir(), `kb-${Date.now()}.db`);
const storage = await connectStorage({ engine: 'sqlite', file });
await migrateToLatest(storage.db);
const config = { ...loadConfig({ PLAINBASE_LOG_LEVEL: 'silent' }), rateLimitPerIp: 0, rateLimitPerKey: 0, database: { engine: 'sqlite' as const, file } };
const deps = { config, db: storage.db, dialect: storage.dialect, clock: systemClock, openSnapshot: storage.openSnapshot };
const app = await buildApp({ ...deps, logger: false });
await app.ready();
const { workspace } = await createOwner(deps as any, { email: 'o@example.com', password: 'correct horse battery', name: 'O' });
const signIn = await app.inject({ method: 'POST', url: '/v1/auth/sign-in', payload: { email: 'o@example.com', password: 'correct horse battery' } });
const cookie = signIn.cookies.find((c) => c.name === 'plainbase_session')!.value;
const created = await app.inject({ method: 'POST', url: '/v1/keys', headers: { cookie: `plainbase_session=${cookie}`, 'x-baas-workspace': workspace.id }, payload: { name: 'k', scopes: ['records:read'] } });
const secret = created.json().secret;
async function time(label: string, n: number, fn: () => Promise<unknown>) {
  for (let i = 0; i < 500; i++) await fn();
  const c0 = process.cpuUsage(); const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await fn();
  const t = Number(process.hrtime.bigint() - t0) / 1e3 / n; const c = process.cpuUsage(c0);
  console.log(label.padEnd(30), (t).toFixed(1), 'µs wall', ((c.user + c.system) / n).toFixed(1), 'µs cpu');
}
const N = Number(process.env.N ?? 5000);
await time('inject healthz', N, () => app.inject({ method: 'GET', url: '/healthz' }));
await time('inject me key', N, () => app.inject({ method: 'GET', url: '/v1/me', headers: { authorization: `Bearer ${secret}` } }));
await time('inject me garbage', N, () => app.inject({ method: 'GET', url: '/v1/me', headers: { authorization: `Bearer ${secret.slice(0, -1)}x` } }));
await time('authenticateKey', N, () => authenticateKey(deps as any, secret, '127.0.0.1'));
await time('select api_keys', N, () => storage.db.selectFrom('api_keys').selectAll().where('id', '=', 'key_x').executeTakeFirst());
await app.close(); await storage.close();
