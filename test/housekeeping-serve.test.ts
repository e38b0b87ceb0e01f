import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import type { Config } from '../src/config.js';
import { connectStorage } from '../src/db/connect.js';
import { sha256Hex } from '../src/secrets.js';
import { describeEachEngine } from './support/harness.js';
import { call, createDatabase, OWNER, sessionHeaders, startServer, stopServer, type ServerProcess } from './support/server-process.js';

/**
 * `plainbase serve` runs housekeeping in its worker at start: rows that expired while it was
 * stopped go, the rest stay. The real server as a child process, on both engines.
 */
describeEachEngine('housekeeping in plainbase serve', (engine) => {
  let server: ServerProcess | undefined;
  let settings: Record<string, string>;
  let database: Config['database'];
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    if (engine === 'sqlite') {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'plainbase-housekeeping-'));
      settings = { PLAINBASE_DATA_DIR: dir };
      database = { engine, file: path.join(dir, 'plainbase.db') };
      cleanup = async () => rmSync(dir, { recursive: true, force: true });
    } else {
      const made = await createDatabase(inject('postgresUrl')!, 'housekeeping');
      settings = { PLAINBASE_DATABASE_URL: made.url };
      database = { engine, url: made.url };
      cleanup = made.drop;
    }
  }, 120_000);

  afterAll(async () => {
    await stopServer(server);
    await cleanup?.();
  });

  it('deletes at start what expired while it was stopped, and keeps the rest', async () => {
    server = await startServer(settings);
    const signIn = () => call(server!.base, 'POST', '/v1/auth/sign-in', {}, OWNER);
    const kept = sessionHeaders(await signIn());
    const expired = sessionHeaders(await signIn());
    await stopServer(server);

    const storage = await connectStorage(database);
    try {
      const tokenHash = (headers: Record<string, string>) => sha256Hex(headers.cookie!.slice('plainbase_session='.length));
      expect(await storage.db.selectFrom('sessions').select('token_hash').orderBy('token_hash').execute()).toHaveLength(2);
      const past = new Date(Date.now() - 60_000).toISOString();
      const ended = await storage.db.updateTable('sessions').set({ expires_at: past }).where('token_hash', '=', tokenHash(expired)).executeTakeFirst();
      expect(Number(ended.numUpdatedRows)).toBe(1);
      const workspaceId = kept['x-baas-workspace']!;
      await storage.db.insertInto('idempotency_keys').values([
        { workspace_id: workspaceId, caller_id: 'per_x', key: 'old', request_hash: 'x', status: 201, body: '{}', created_at: new Date(Date.now() - 25 * 3600_000).toISOString() },
        { workspace_id: workspaceId, caller_id: 'per_x', key: 'recent', request_hash: 'x', status: 201, body: '{}', created_at: new Date().toISOString() },
      ]).execute();

      server = await startServer(settings);
      const deadline = Date.now() + 60_000;
      const keys = async () => (await storage.db.selectFrom('idempotency_keys').select('key').orderBy('key').execute()).map((row) => row.key);
      const sessions = async () => (await storage.db.selectFrom('sessions').select('token_hash').execute()).map((row) => row.token_hash);
      // Waiting for the worker's first round, which purges one kind of row after another.
      while (((await keys()).length > 1 || (await sessions()).length > 1) && Date.now() < deadline) await sleep(100);
      expect(await keys()).toEqual(['recent']);
      expect(await sessions()).toEqual([tokenHash(kept)]);
    } finally {
      await storage.close();
    }
    expect((await call(server.base, 'GET', '/v1/me', kept)).status).toBe(200);
    expect((await call(server.base, 'GET', '/v1/me', expired)).status).toBe(401);
  }, 120_000);
});
