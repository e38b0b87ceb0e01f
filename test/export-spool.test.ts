import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { expectError, inNewWorkspace, KeyClient, signedInOwner, type Client } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/**
 * Exports are written to the data folder before they are sent. The attack: a key starts exports
 * and never reads them. Their spool must stay under the caller's limit, leave other workspaces
 * free to export, and be removed once the download stalls.
 */
const MiB = 1024 * 1024;
const RECORDS = 12;
/** Each record's text: RECORDS of them make an export of about 6 MiB, more than a socket's buffers take (4 MiB at most here). */
const FILLER = 'x'.repeat(500_000);
/** Long enough for the checks made while two exports are held, short enough to wait for. */
const STALL_MS = 2000;

describeEachEngine('export spool on disk', (engine) => {
  let t: TestApp;
  let dataDir: string;
  let port: number;
  let owner: Client;
  let key: { id: string; secret: string; client: KeyClient };
  let otherWorkspaceSecret: string;
  /** The bytes of the whole export of `big`: the limits are set to twice it. */
  let exportBytes: number;
  const sockets: net.Socket[] = [];

  const exportsFolder = () => path.join(dataDir, 'exports');
  const spoolFiles = () => (fs.existsSync(exportsFolder()) ? fs.readdirSync(exportsFolder()).map((name) => path.join(exportsFolder(), name)) : []);
  const heldByKey = () => t.deps.services.exportSpool.heldBy(`caller:${key.id}`);

  async function newKey(creator: Client) {
    const created = await creator.post('/v1/keys', { name: 'exporter', scopes: ['records:read'] });
    expect(created.status).toBe(201);
    return { id: created.body.id as string, secret: created.body.secret as string, client: new KeyClient(t, created.body.secret) };
  }

  /** An export read whole, as text (the Client would parse NDJSON as one JSON document). */
  async function exportOf(secret: string, collection: string): Promise<{ status: number; body: string }> {
    const response = await t.app.inject({ method: 'GET', url: `/v1/collections/${collection}/export`, headers: { authorization: `Bearer ${secret}` } });
    return { status: response.statusCode, body: response.body };
  }

  /** Asks for the export over a real connection and never reads a byte of the answer. */
  function neverReadingExport(secret: string): net.Socket {
    const socket = net.connect(port, '127.0.0.1');
    socket.pause();
    socket.on('error', () => undefined);
    socket.write(`GET /v1/collections/big/export HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${secret}\r\n\r\n`);
    sockets.push(socket);
    return socket;
  }

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plainbase-export-spool-'));
    t = await startTestApp(engine, { dataDir, exportStallMs: STALL_MS });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as net.AddressInfo).port;
    owner = await signedInOwner(t);
    expect((await owner.post('/v1/collections', { name: 'big' })).status).toBe(201);
    const rows = Array.from({ length: RECORDS }, (_, n) => JSON.stringify({ n, filler: FILLER })).join('\n');
    const imported = await owner.call('POST', '/v1/collections/big/import', rows, { 'content-type': 'application/x-ndjson' });
    expect(imported.body).toMatchObject({ imported: RECORDS });
    key = await newKey(owner);
    // A second tenant, exporting while the first is at its limit.
    const second = await inNewWorkspace(t, owner, 'second');
    expect((await second.post('/v1/collections', { name: 'small' })).status).toBe(201);
    expect((await second.post('/v1/collections/small/records', { data: { n: 1 } })).status).toBe(201);
    otherWorkspaceSecret = (await newKey(second)).secret;
    // Room for exactly two exports of `big`, for the key and for its workspace; the app reads
    // its configuration object at each request, so the limits can follow the measured size.
    const whole = await exportOf(key.secret, 'big');
    expect(whole.status).toBe(200);
    exportBytes = Buffer.byteLength(whole.body);
    expect(exportBytes).toBeGreaterThan(5 * MiB);
    // Its spool is given back when the server's side of the download closes, which on a busy
    // machine may come after the client has the whole body: the tests below count from zero.
    await vi.waitFor(() => expect(heldByKey()).toBe(0), { timeout: 5_000, interval: 10 });
    t.deps.config.exportSpoolBytesPerCaller = 2 * exportBytes;
    t.deps.config.exportSpoolBytesPerWorkspace = 2 * exportBytes;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await t.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('never-read exports by one key stop at its limit, another workspace still exports, and the stall deadline empties the folder', async () => {
    // Two exports that are never read: together exactly the limit.
    neverReadingExport(key.secret);
    neverReadingExport(key.secret);
    await vi.waitFor(() => expect(heldByKey()).toBe(2 * exportBytes), { timeout: 10_000, interval: 10 });
    await vi.waitFor(() => expect(spoolFiles()).toHaveLength(2), { timeout: 1000, interval: 10 });
    // Written with no rights for other local users.
    for (const file of spoolFiles()) expect(fs.statSync(file).mode & 0o777).toBe(0o600);

    // A third by the key, and one by another caller of its workspace: refused before any work,
    // with when to try again, and nothing more on disk.
    const refused = await key.client.get('/v1/collections/big/export');
    expect(expectError(refused, 429, 'RATE_LIMITED').details).toMatchObject({ limit: 2 * exportBytes, scope: 'caller' });
    expect(Number(refused.headers['retry-after'])).toBe(STALL_MS / 1000);
    expect(expectError(await owner.get('/v1/collections/big/export'), 429, 'RATE_LIMITED').details).toMatchObject({ scope: 'workspace' });
    expect(spoolFiles()).toHaveLength(2);

    // The other workspace is not held back by the first one's exports.
    const other = await exportOf(otherWorkspaceSecret, 'small');
    expect(other.status).toBe(200);
    expect(JSON.parse(other.body.trim())).toMatchObject({ data: { n: 1 } });

    // Nobody reads the two: after the stall deadline they are cut off and their files removed.
    await vi.waitFor(() => expect({ files: spoolFiles(), held: heldByKey() }).toEqual({ files: [], held: 0 }), { timeout: 10_000, interval: 25 });

    // The key may export again, and a download read to its end leaves nothing behind.
    const whole = await exportOf(key.secret, 'big');
    expect(whole.status).toBe(200);
    expect(whole.body.trim().split('\n')).toHaveLength(RECORDS);
    await vi.waitFor(() => expect({ files: spoolFiles(), held: heldByKey() }).toEqual({ files: [], held: 0 }), { timeout: 5_000, interval: 10 });
  });

  it('an export larger than the limit on its own is a 409 naming the limit, and leaves nothing on disk', async () => {
    const config = t.deps.config;
    const before = config.exportSpoolBytesPerCaller;
    config.exportSpoolBytesPerCaller = exportBytes - 1;
    try {
      const error = expectError(await key.client.get('/v1/collections/big/export'), 409, 'CONFLICT');
      expect(error.details).toMatchObject({ limit: exportBytes - 1, scope: 'caller' });
    } finally {
      config.exportSpoolBytesPerCaller = before;
    }
    expect(spoolFiles()).toEqual([]);
    expect(heldByKey()).toBe(0);
  });

  it('a download the client abandons halfway is removed at once, without waiting for the stall deadline', async () => {
    const socket = net.connect(port, '127.0.0.1');
    sockets.push(socket);
    let received = 0;
    const gotSome = new Promise<void>((resolve) => {
      socket.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > 64 * 1024) resolve();
      });
      socket.on('close', () => resolve());
    });
    socket.write(`GET /v1/collections/big/export HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${key.secret}\r\n\r\n`);
    await gotSome;
    expect(received).toBeGreaterThan(64 * 1024);
    socket.destroy();
    const abandonedAt = Date.now();
    await vi.waitFor(() => expect({ files: spoolFiles(), held: heldByKey() }).toEqual({ files: [], held: 0 }), { timeout: 5_000, interval: 10 });
    expect(Date.now() - abandonedAt).toBeLessThan(STALL_MS);
  });
});
