import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { inNewWorkspace, signedInOwner, type Client } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/**
 * A record's versions list (docs/history.md) asked by clients that never read the answer, over
 * raw sockets to a listening app: a page of several megabytes waits in their sockets, and holds
 * nothing else. More of them than the database pool has connections, yet the same record can
 * still be changed and its versions listed, in its workspace and in another one.
 */
describeEachEngine('a record\'s versions, to clients that never read', (engine) => {
  let t: TestApp;
  let owner: Client;
  let second: Client;
  let port: number;
  const ids = new Map<Client, string>();
  const big = 'x'.repeat(400_000);
  const versionsOf = (client: Client) => `/v1/collections/notes/records/${ids.get(client)}/versions`;

  beforeAll(async () => {
    t = await startTestApp(engine);
    owner = await signedInOwner(t);
    second = await inNewWorkspace(t, owner, 'second');
    for (const client of [owner, second]) {
      expect((await client.post('/v1/collections', { name: 'notes' })).status).toBe(201);
      ids.set(client, (await client.post('/v1/collections/notes/records', { data: { n: 0 } })).body.id);
    }
    // Fifteen versions of 400 kB: a page of about 6 MB, far more than a socket's buffers take.
    for (let n = 1; n < 15; n++) expect((await owner.patch(`/v1/collections/notes/records/${ids.get(owner)}`, { data: { n, big } })).status).toBe(200);
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = Number(new URL(base).port);
  }, 120_000);
  afterAll(async () => t?.close());

  /** Asks for the owner's versions list and never reads a byte of the answer. */
  function neverReading(): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', reject);
      socket.on('connect', () => {
        socket.pause();
        socket.write([`GET ${versionsOf(owner)}?limit=100 HTTP/1.1`, 'host: 127.0.0.1', `cookie: plainbase_session=${owner.cookie}`, `x-baas-workspace: ${owner.workspaceId}`].join('\r\n') + '\r\n\r\n');
        resolve(socket);
      });
    });
  }

  it('answers everyone else while six pages wait unread, and changes the record meanwhile', async () => {
    const sockets = await Promise.all(Array.from({ length: 6 }, () => neverReading()));
    try {
      // Time for the server to read the pages and write what the sockets take (not a bound).
      await new Promise((resolve) => setTimeout(resolve, 500));
      for (const socket of sockets) expect(socket.destroyed).toBe(false);

      const changed = await owner.patch(`/v1/collections/notes/records/${ids.get(owner)}`, { data: { n: 15 } });
      expect(changed.status).toBe(200);
      const listed = await owner.get(`${versionsOf(owner)}?limit=2`);
      expect([listed.status, listed.body.data.map((version: { revision: number }) => version.revision)]).toEqual([200, [16, 15]]);
      expect((await second.patch(`/v1/collections/notes/records/${ids.get(second)}`, { data: { n: 1 } })).status).toBe(200);
      const other = await second.get(versionsOf(second));
      expect([other.status, other.body.data.map((version: { revision: number }) => version.revision)]).toEqual([200, [2, 1]]);

      // A reader that comes back gets its whole page, as it was when it asked.
      const answer = await readAnswer(sockets[0]!);
      expect(answer.head).toMatch(/^HTTP\/1\.1 200 /);
      const revisions = (JSON.parse(answer.body) as { data: { revision: number }[] }).data.map((version) => version.revision);
      expect(revisions.slice(-15)).toEqual(Array.from({ length: 15 }, (_, i) => 15 - i));
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });
});

/** Reads an answer with a content-length to its end, from a socket left paused until now. */
function readAnswer(socket: Socket): Promise<{ head: string; body: string }> {
  return new Promise((resolve, reject) => {
    let data = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      const end = data.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = data.subarray(0, end).toString('latin1');
      const length = Number(/content-length: (\d+)/i.exec(head)?.[1]);
      if (data.length - end - 4 >= length) resolve({ head, body: data.subarray(end + 4, end + 4 + length).toString('utf8') });
    });
    socket.on('error', reject);
    socket.on('close', () => reject(new Error('closed before the answer ended')));
    socket.resume();
  });
}
