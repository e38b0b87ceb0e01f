import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { connect, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { inNewWorkspace, signedInOwner, type Client } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/**
 * A backup's download (GET /v1/backups/{name}/content, docs/backups.md) to clients that never
 * read it and to one that reads slowly, over raw sockets to an app listening on loopback. The
 * download streams a file from disk: once the operator is checked, it holds no database
 * connection, so more never-reading downloads than the pool has connections (5) stop nobody:
 * the owner and another workspace are answered at once, and a backup can still be taken and
 * listed. A slow reader, and a never-reader that reads at last, get the archive byte for byte.
 */
describeEachEngine('a backup\'s download, to clients that never read or read slowly', (engine) => {
  const NEVER_READING = 8;
  let t: TestApp;
  let owner: Client;
  let second: Client;
  let port: number;
  let dataDir: string;
  let archive: { name: string; bytes: Buffer };

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plainbase-backup-readers-'));
    t = await startTestApp(engine, { dataDir });
    owner = await signedInOwner(t);
    second = await inNewWorkspace(t, owner, 'second');
    for (const client of [owner, second]) expect((await client.post('/v1/collections', { name: 'notes' })).status).toBe(201);
    // Ten records of 400 kB: an archive of several megabytes, far more than a socket's buffers take.
    const big = 'x'.repeat(400_000);
    for (let n = 0; n < 10; n++) expect((await owner.post('/v1/collections/notes/records', { data: { n, big } })).status).toBe(201);
    const name = await takeBackup();
    archive = { name, bytes: fs.readFileSync(path.join(dataDir, 'backups', name)) };
    expect(archive.bytes.length).toBeGreaterThan(4_000_000);
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = Number(new URL(base).port);
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** Starts a backup and waits until it is listed; the clock moves a second first, so each has its own name. */
  async function takeBackup(): Promise<string> {
    t.clock.advance(1000);
    const started = await owner.post('/v1/backups');
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const listed = await owner.get('/v1/backups');
      expect(listed.status).toBe(200);
      if (listed.body.data.some((backup: { name: string }) => backup.name === started.body.name)) return started.body.name;
      if (Date.now() > deadline) throw new Error(`backup ${started.body.name} never appeared`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Asks for the archive and never reads a byte of the answer. */
  function neverReading(): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', reject);
      socket.on('connect', () => {
        socket.pause();
        socket.write([`GET /v1/backups/${archive.name}/content HTTP/1.1`, 'host: 127.0.0.1', `cookie: plainbase_session=${owner.cookie}`].join('\r\n') + '\r\n\r\n');
        resolve(socket);
      });
    });
  }

  /** A request over loopback, as another client would send it, with how long it took. */
  async function timed(client: Client, method: string, url: string, body?: unknown): Promise<{ status: number; ms: number }> {
    const started = Date.now();
    const reply = await fetch(`http://127.0.0.1:${port}${url}`, {
      method,
      headers: { cookie: `plainbase_session=${client.cookie}`, 'x-baas-workspace': client.workspaceId!, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    await reply.arrayBuffer();
    return { status: reply.status, ms: Date.now() - started };
  }

  it('answers everyone else while downloads wait unread, takes and lists a backup meanwhile, and a slow reader gets the whole archive', async () => {
    const sockets = await Promise.all(Array.from({ length: NEVER_READING }, () => neverReading()));
    try {
      // Time for the server to open the file and fill what the sockets take (not a bound).
      await new Promise((resolve) => setTimeout(resolve, 500));
      for (const socket of sockets) expect(socket.destroyed).toBe(false);

      // Other workspaces' requests and the owner's own, reads and writes: answered, and fast
      // (a request that waited for a connection held by a download would wait until the test ends).
      const answers = [
        await timed(second, 'GET', '/v1/collections/notes/records?limit=5'),
        await timed(second, 'POST', '/v1/collections/notes/records', { data: { n: 1 } }),
        await timed(owner, 'GET', '/v1/collections/notes/records?limit=2&fields=data.n'),
        await timed(owner, 'POST', '/v1/collections/notes/records', { data: { n: 99 } }),
        await timed(owner, 'GET', '/v1/backups'),
      ];
      expect(answers.map((answer) => answer.status)).toEqual([200, 201, 200, 201, 200]);
      // Generous for a busy shared machine; each is a few milliseconds when idle.
      for (const answer of answers) expect(answer.ms).toBeLessThan(2000);
      // More readers of the same archive than connections in the pool, and yet a backup is taken and listed.
      const next = await takeBackup();
      expect(next).not.toBe(archive.name);

      // A slow reader: a chunk, then a pause, to the end; the archive arrives whole.
      const slow = await readAnswer(await neverReading(), 10);
      expect(slow.head).toMatch(/^HTTP\/1\.1 200 /);
      expect(slow.head).toMatch(/content-type: application\/x-tar/i);
      expect(digest(slow.body)).toBe(digest(archive.bytes));
      // A reader that never read comes back and gets its whole archive too.
      const late = await readAnswer(sockets[0]!, 0);
      expect(digest(late.body)).toBe(digest(archive.bytes));
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  }, 60_000);
});

const digest = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Reads an answer with a content-length to its end, pausing `pauseMs` after every chunk. */
function readAnswer(socket: Socket, pauseMs: number): Promise<{ head: string; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
      const data = Buffer.concat(chunks);
      const end = data.indexOf('\r\n\r\n');
      if (end >= 0) {
        const head = data.subarray(0, end).toString('latin1');
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1]);
        if (received - end - 4 >= length) {
          socket.removeAllListeners('close');
          resolve({ head, body: data.subarray(end + 4, end + 4 + length) });
          return;
        }
      }
      if (pauseMs > 0) {
        socket.pause();
        setTimeout(() => socket.resume(), pauseMs);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => reject(new Error('closed before the answer ended')));
    socket.resume();
  });
}
