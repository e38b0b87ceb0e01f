import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { InjectOptions } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Scope } from '../src/abilities.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { expectError, signedInOwner, type Client, type Reply } from './support/client.js';
import { outbox } from './support/events.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';
import { startTestS3, type TestS3 } from './support/s3-server.js';

/**
 * Files through the HTTP API, on both engines and both stores (the disk under the data folder,
 * and S3 through the AWS SDK against s3rver, a real S3 protocol server on loopback).
 */

const MAX_BYTES = 16 * 1024 * 1024;
const MiB = 1024 * 1024;
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
/** A small PNG's worth of bytes: the content matters, not that it decodes. */
const PHOTO = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(4000)]);

describe('file settings', () => {
  const configError = (env: Record<string, string>) => {
    try {
      loadConfig(env);
    } catch (error) {
      if (error instanceof ConfigError) return error.message;
      throw error;
    }
    throw new Error('expected a ConfigError');
  };

  it('keep files on disk by default, up to 5 GiB; S3 when a bucket is named', () => {
    expect(loadConfig({})).toMatchObject({ s3: null, fileMaxBytes: 5 * 1024 ** 3 });
    expect(loadConfig({
      PLAINBASE_S3_BUCKET: 'my-files',
      PLAINBASE_S3_ENDPOINT: 'http://127.0.0.1:9000/',
      PLAINBASE_S3_ACCESS_KEY_ID: 'id',
      PLAINBASE_S3_SECRET_ACCESS_KEY: 'secret',
      PLAINBASE_S3_FORCE_PATH_STYLE: '1',
      PLAINBASE_FILE_MAX_BYTES: '1000',
    })).toMatchObject({
      fileMaxBytes: 1000,
      s3: { bucket: 'my-files', endpoint: 'http://127.0.0.1:9000', region: 'us-east-1', accessKeyId: 'id', secretAccessKey: 'secret', forcePathStyle: true },
    });
    expect(loadConfig({ PLAINBASE_S3_BUCKET: 'my-files' }).s3).toMatchObject({ endpoint: null, accessKeyId: null, secretAccessKey: null, forcePathStyle: false });
  });

  it('stop the start with one line naming the variable to fix, never echoing the secret', () => {
    expect(configError({ PLAINBASE_S3_ENDPOINT: 'http://127.0.0.1:9000' })).toBe('PLAINBASE_S3_BUCKET: must be set to keep files in S3 (PLAINBASE_S3_ENDPOINT is set)');
    expect(configError({ PLAINBASE_S3_BUCKET: 'b', PLAINBASE_S3_ACCESS_KEY_ID: 'id' })).toMatch(/^PLAINBASE_S3_BUCKET: must be an S3 bucket name/);
    expect(configError({ PLAINBASE_S3_BUCKET: 'bucket', PLAINBASE_S3_ACCESS_KEY_ID: 'id' })).toBe('PLAINBASE_S3_SECRET_ACCESS_KEY: must be set together with the other S3 credential');
    expect(configError({ PLAINBASE_S3_BUCKET: 'bucket', PLAINBASE_S3_ENDPOINT: 'ftp://x' })).toMatch(/^PLAINBASE_S3_ENDPOINT: must be an http/);
    expect(configError({ PLAINBASE_FILE_MAX_BYTES: '0' })).toMatch(/^PLAINBASE_FILE_MAX_BYTES: must be at least 1/);
    expect(configError({ PLAINBASE_S3_SECRET_ACCESS_KEY: 'hunter2-hunter2' })).not.toContain('hunter2');
  });
});

let s3: TestS3;
beforeAll(async () => {
  s3 = await startTestS3();
});
afterAll(async () => {
  await s3?.close();
});

describeEachEngine('files', (engine) => {
  for (const store of ['disk', 's3'] as const) {
    describe(`kept in ${store === 'disk' ? 'the data folder' : 'S3'}`, () => {
      let t: TestApp;
      let owner: Client & { personId: string };
      let dataDir: string;
      let baseUrl: string;
      let workspaceId: string;
      const keys = {} as Record<'all' | 'filesRead' | 'recordsRead' | 'filesWrite' | 'onlyOther', string>;
      const collections = {} as Record<'photos' | 'other' | 'pub', string>;

      beforeAll(async () => {
        dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plainbase-files-'));
        t = await startTestApp(engine, { dataDir, fileMaxBytes: MAX_BYTES, s3: store === 's3' ? s3.settings : null });
        await t.app.listen({ port: 0, host: '127.0.0.1' });
        const address = t.app.server.address();
        baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
        owner = await signedInOwner(t);
        workspaceId = owner.workspaceId!;
        for (const name of ['photos', 'other', 'pub'] as const) {
          const created = await owner.post('/v1/collections', { name, public: name === 'pub' });
          expect(created.status).toBe(201);
          collections[name] = created.body.id;
        }
        const key = async (scopes: Scope[], only?: string[]) => {
          const created = await owner.post('/v1/keys', { name: scopes.join(' '), scopes, ...(only ? { collections: only } : {}) });
          expect(created.status).toBe(201);
          return created.body.secret as string;
        };
        keys.all = await key(['collections:read', 'records:read', 'records:create', 'records:update', 'records:delete', 'files:read', 'files:write']);
        keys.filesRead = await key(['files:read']);
        keys.recordsRead = await key(['records:read']);
        keys.filesWrite = await key(['files:write']);
        keys.onlyOther = await key(['files:read', 'files:write'], [collections.other]);
      }, 60_000);
      afterAll(async () => {
        await t?.close();
        if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
      });

      const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });

      async function send(options: InjectOptions): Promise<Reply & { raw: Buffer }> {
        const response = await t.app.inject(options);
        const type = String(response.headers['content-type'] ?? '');
        const body = type.includes('json') && response.body ? JSON.parse(response.body) : response.body;
        return { status: response.statusCode, headers: response.headers, body, raw: response.rawPayload };
      }

      const upload = (col: string, bytes: Buffer, options: { name?: string; type?: string; key?: string; headers?: Record<string, string> } = {}) =>
        send({
          method: 'POST',
          url: `/v1/collections/${col}/files${options.name === undefined ? '' : `?name=${encodeURIComponent(options.name)}`}`,
          headers: { ...bearer(options.key ?? keys.all), ...(options.type ? { 'content-type': options.type } : {}), ...options.headers },
          payload: bytes,
        });

      const download = (col: string, fileId: string, headers: Record<string, string> = bearer(keys.all), query = '') =>
        send({ method: 'GET', url: `/v1/collections/${col}/files/${fileId}/content${query}`, headers });

      async function uploaded(col: string, bytes: Buffer = PHOTO, name = 'photo.png', type = 'image/png'): Promise<string> {
        const reply = await upload(col, bytes, { name, type });
        expect(reply.status, JSON.stringify(reply.body)).toBe(201);
        return reply.body.id;
      }

      async function newRecord(col: string, data: Record<string, unknown> = { title: 'a record' }): Promise<string> {
        const reply = await send({ method: 'POST', url: `/v1/collections/${col}/records`, headers: { ...bearer(keys.all), 'content-type': 'application/json' }, payload: { data } });
        expect(reply.status).toBe(201);
        return reply.body.id;
      }

      const attach = (col: string, recordId: string, fileId: string, key = keys.all) =>
        send({ method: 'POST', url: `/v1/collections/${col}/records/${recordId}/files`, headers: { ...bearer(key), 'content-type': 'application/json' }, payload: { fileId } });

      const fileRows = async () => t.deps.db.selectFrom('files').select(['id', 'storage_key']).where('workspace_id', '=', workspaceId).execute();

      /** What the store holds for this workspace: object keys, and for the disk its temporary files too. */
      async function stored(): Promise<{ objects: string[]; temp: string[] }> {
        if (store === 's3') return { objects: await s3.keys(`${workspaceId}/`), temp: [] };
        const root = path.join(dataDir, 'files');
        const walk = (dir: string): string[] =>
          fs.existsSync(dir) ? fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => entry.isDirectory() ? walk(path.join(dir, entry.name)) : [path.join(dir, entry.name)]) : [];
        return {
          objects: walk(path.join(root, 'objects', workspaceId)).map((file) => path.relative(path.join(root, 'objects'), file).split(path.sep).join('/')).sort(),
          temp: walk(path.join(root, 'tmp')),
        };
      }

      /** The store holds exactly the content of the file rows, and no temporary file (waits for clean-up in flight). */
      async function expectStoreMatchesRows(): Promise<void> {
        let last = { rows: [] as string[], stored: { objects: [] as string[], temp: [] as string[] } };
        for (let attempt = 0; attempt < 50; attempt++) {
          last = { rows: (await fileRows()).map((row) => row.storage_key).sort(), stored: await stored() };
          if (JSON.stringify(last.rows) === JSON.stringify(last.stored.objects) && last.stored.temp.length === 0) return;
          await sleep(100);
        }
        expect(last.stored.objects).toEqual(last.rows);
        expect(last.stored.temp).toEqual([]);
      }

      describe('upload', () => {
        it('takes a raw body: name from ?name=, type from Content-Type; answers the metadata with the SHA-256', async () => {
          const reply = await upload('photos', PHOTO, { name: 'été à Zürich.png', type: 'image/png' });
          expect(reply.status).toBe(201);
          expect(reply.body).toEqual({
            id: expect.stringMatching(/^fil_[0-9a-z]{26}$/),
            collectionId: collections.photos,
            name: 'été à Zürich.png',
            size: PHOTO.length,
            contentType: 'image/png',
            sha256: sha256(PHOTO),
            createdAt: t.clock.now().toISOString(),
            createdBy: { type: 'key', id: expect.stringMatching(/^key_/) },
          });
          expect(reply.headers.location).toBe(`/v1/collections/${collections.photos}/files/${reply.body.id}`);
          const metadata = await send({ method: 'GET', url: reply.headers.location as string, headers: bearer(keys.filesRead) });
          expect(metadata.status).toBe(200);
          expect(metadata.body).toEqual(reply.body);
          expect((await download('photos', reply.body.id)).raw.equals(PHOTO)).toBe(true);
          await expectStoreMatchesRows();
        });

        it('takes a multipart form: name and type from the file part, ?name= overrides the name; a person can upload too', async () => {
          const boundary = 'plainbase-boundary-42';
          const form = Buffer.concat([
            Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="note"\r\n\r\nhello\r\n`),
            Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="scan.pdf"\r\nContent-Type: application/pdf\r\n\r\n`),
            PHOTO,
            Buffer.from(`\r\n--${boundary}--\r\n`),
          ]);
          const headers = { 'content-type': `multipart/form-data; boundary=${boundary}` };
          const asPart = await upload('photos', form, { headers });
          expect(asPart.status, JSON.stringify(asPart.body)).toBe(201);
          expect(asPart.body).toMatchObject({ name: 'scan.pdf', contentType: 'application/pdf', size: PHOTO.length, sha256: sha256(PHOTO) });

          const renamed = await send({
            method: 'POST',
            url: '/v1/collections/photos/files?name=renamed.pdf',
            headers: { ...headers, cookie: `plainbase_session=${owner.cookie}`, 'x-baas-workspace': workspaceId },
            payload: form,
          });
          expect(renamed.status, JSON.stringify(renamed.body)).toBe(201);
          expect(renamed.body).toMatchObject({ name: 'renamed.pdf', createdBy: { type: 'person', id: owner.personId } });
          expect((await download('photos', renamed.body.id)).raw.equals(PHOTO)).toBe(true);
        });

        it('stores an empty body as an empty file, and application/octet-stream when no type is given', async () => {
          const reply = await send({ method: 'POST', url: '/v1/collections/photos/files?name=empty', headers: bearer(keys.all) });
          expect(reply.status, JSON.stringify(reply.body)).toBe(201);
          expect(reply.body).toMatchObject({ size: 0, contentType: 'application/octet-stream', sha256: sha256(Buffer.alloc(0)) });
          const got = await download('photos', reply.body.id);
          expect(got.status).toBe(200);
          expect(got.headers['content-length']).toBe('0');
        });

        it('refuses bad input with the right code, leaving nothing behind', async () => {
          expect(expectError(await upload('photos', PHOTO, { type: 'image/png' }), 400, 'INVALID_REQUEST').details?.field).toBe('querystring.name');
          expectError(await upload('photos', PHOTO, { name: 'a\u0007b.png', type: 'image/png' }), 400, 'INVALID_REQUEST');
          expectError(await upload('photos', PHOTO, { name: 'x'.repeat(256), type: 'image/png' }), 400, 'INVALID_REQUEST');
          expectError(await upload('photos', PHOTO, { name: 'a.png', type: 'not a type' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
          expectError(await upload('photos', PHOTO, { name: 'a.png', type: 'multipart/form-data' }), 400, 'INVALID_REQUEST');
          const boundary = 'b';
          const noFile = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="note"\r\n\r\nhello\r\n--${boundary}--\r\n`);
          expectError(await upload('photos', noFile, { headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } }), 400, 'INVALID_REQUEST');
          const cut = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\n\r\nabc`);
          expectError(await upload('photos', cut, { headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } }), 400, 'INVALID_REQUEST');
          expectError(await upload('nope', PHOTO, { name: 'a.png', type: 'image/png' }), 404, 'NOT_FOUND');
          expectError(await send({ method: 'GET', url: '/v1/collections/photos/files/fil_nope', headers: bearer(keys.all) }), 400, 'INVALID_REQUEST');
          await expectStoreMatchesRows();
        });

        // PostgreSQL only: a lock on the collections table holds the upload at its collection
        // lookup (SQLite's readers do not wait for a writer), while the form's end is parsed.
        it.runIf(engine === 'postgres')('a form that breaks off while the upload waits for its collection leaves nothing behind', async () => {
          const boundary = 'b';
          const cut = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\n\r\nabc`);
          const { pending } = await t.storage.db.transaction().execute(async (trx) => {
            await sql`lock table collections in access exclusive mode`.execute(trx);
            const pending = upload('photos', cut, { headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } });
            // busboy reads the end of the form, and reports it broken, while the lookup waits.
            await sleep(500);
            return { pending };
          });
          // An upload waiting forever on a stream whose error it missed would not answer: 10 s at most.
          const reply = await Promise.race([pending, sleep(10_000).then(() => null)]);
          expect(reply, 'the upload never answered').not.toBeNull();
          expectError(reply!, 400, 'INVALID_REQUEST');
          await expectStoreMatchesRows();
        });

        it('refuses a file over PLAINBASE_FILE_MAX_BYTES with 413, from its Content-Length or while streaming, leaving nothing behind', async () => {
          const before = (await fileRows()).length;
          const declared = await send({
            method: 'POST',
            url: '/v1/collections/photos/files?name=big.bin',
            headers: { ...bearer(keys.all), 'content-type': 'application/octet-stream', 'content-length': String(MAX_BYTES + 1) },
            payload: Buffer.alloc(10),
          });
          expect(expectError(declared, 413, 'PAYLOAD_TOO_LARGE').details).toEqual({ maxBytes: MAX_BYTES });

          // Chunked, so the size shows only as the bytes arrive (over real HTTP).
          const streamed = await streamUpload(`${baseUrl}/v1/collections/photos/files?name=big.bin`, bearer(keys.all), MAX_BYTES + MiB);
          expect(streamed.status).toBe(413);
          expect(JSON.parse(streamed.body).error.code).toBe('PAYLOAD_TOO_LARGE');

          const boundary = 'big';
          const form = Buffer.concat([
            Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n\r\n`),
            Buffer.alloc(MAX_BYTES + 1, 1),
            Buffer.from(`\r\n--${boundary}--\r\n`),
          ]);
          expectError(await upload('photos', form, { headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } }), 413, 'PAYLOAD_TOO_LARGE');
          // Refused before a byte is read: the answer still arrives while the body is on its way.
          const anonymous = await streamUpload(`${baseUrl}/v1/collections/photos/files?name=big.bin`, {}, 4 * MiB);
          expect([anonymous.status, JSON.parse(anonymous.body).error.code]).toEqual([401, 'UNAUTHENTICATED']);
          expect((await fileRows()).length).toBe(before);
          await expectStoreMatchesRows();
        });

        it('keeps exactly MAX bytes, streamed over real HTTP in many parts (multipart upload on S3)', async () => {
          const reply = await streamUpload(`${baseUrl}/v1/collections/photos/files?name=exact.bin`, bearer(keys.all), MAX_BYTES);
          expect(reply.status, reply.body).toBe(201);
          const file = JSON.parse(reply.body);
          expect(file.size).toBe(MAX_BYTES);
          expect(file.sha256).toBe(sha256(patternBytes(0, MAX_BYTES)));
          const response = await fetch(`${baseUrl}/v1/collections/photos/files/${file.id}/content`, { headers: bearer(keys.filesRead) });
          const bytes = Buffer.from(await response.arrayBuffer());
          expect(bytes.length).toBe(MAX_BYTES);
          expect(sha256(bytes)).toBe(file.sha256);
          // A range across S3's 5 MiB part boundary.
          const ranged = await fetch(`${baseUrl}/v1/collections/photos/files/${file.id}/content`, { headers: { ...bearer(keys.filesRead), range: `bytes=${5 * MiB - 3}-${5 * MiB + 2}` } });
          expect(ranged.status).toBe(206);
          expect(Buffer.from(await ranged.arrayBuffer()).equals(patternBytes(5 * MiB - 3, 6))).toBe(true);
        });

        it('leaves no file and no row when the client goes away mid-upload', async () => {
          const before = (await fileRows()).length;
          // 12 MiB of a declared 14: on S3 two parts are already up when the connection drops.
          await abortedUpload(`${baseUrl}/v1/collections/photos/files?name=cut.bin`, bearer(keys.all), 14 * MiB, 12 * MiB);
          await expectStoreMatchesRows();
          // Once more with a form, cut inside its file part.
          await abortedUpload(`${baseUrl}/v1/collections/photos/files`, { ...bearer(keys.all), 'content-type': 'multipart/form-data; boundary=cut' }, 3 * MiB, 2 * MiB,
            Buffer.from('--cut\r\nContent-Disposition: form-data; name="file"; filename="cut.bin"\r\n\r\n'));
          await expectStoreMatchesRows();
          expect((await fileRows()).length).toBe(before);
          // The server is still fine.
          expect((await upload('photos', PHOTO, { name: 'after.png', type: 'image/png' })).status).toBe(201);
          await expectStoreMatchesRows();
        });
      });

      describe('download', () => {
        let fileId: string;
        const bytes = patternBytes(0, 1000);
        beforeAll(async () => {
          fileId = await uploaded('photos', bytes, 'rapport "final" 2026.txt', 'text/plain; charset=utf-8');
        });

        it('streams the content with its type, length, ETag, nosniff and a safe Content-Disposition', async () => {
          const reply = await download('photos', fileId, bearer(keys.filesRead));
          expect(reply.status).toBe(200);
          expect(reply.raw.equals(bytes)).toBe(true);
          expect(reply.headers).toMatchObject({
            'content-type': 'text/plain; charset=utf-8',
            'content-length': '1000',
            etag: `"${sha256(bytes)}"`,
            'accept-ranges': 'bytes',
            'x-content-type-options': 'nosniff',
            'content-disposition': `inline; filename="rapport _final_ 2026.txt"; filename*=UTF-8''rapport%20%22final%22%202026.txt`,
          });
          const forced = await download('photos', fileId, bearer(keys.filesRead), '?download=true');
          expect(forced.headers['content-disposition']).toMatch(/^attachment; /);
          const head = await send({ method: 'HEAD', url: `/v1/collections/photos/files/${fileId}/content`, headers: bearer(keys.filesRead) });
          expect(head.status).toBe(200);
          expect(head.headers['content-length']).toBe('1000');
          expect(head.raw.length).toBe(0);
          const cached = await download('photos', fileId, { ...bearer(keys.filesRead), 'if-none-match': `"${sha256(bytes)}"` });
          expect(cached.status).toBe(304);
          expect(cached.raw.length).toBe(0);
        });

        it('answers one byte range with 206 and Content-Range; a bad or unsatisfiable range with 416', async () => {
          const ranged = async (range: string, extra: Record<string, string> = {}) => download('photos', fileId, { ...bearer(keys.filesRead), range, ...extra });
          const first = await ranged('bytes=0-9');
          expect(first.status).toBe(206);
          expect(first.headers['content-range']).toBe('bytes 0-9/1000');
          expect(first.headers['content-length']).toBe('10');
          expect(first.raw.equals(bytes.subarray(0, 10))).toBe(true);
          const middle = await ranged('bytes=500-');
          expect([middle.status, middle.headers['content-range'], middle.raw.equals(bytes.subarray(500))]).toEqual([206, 'bytes 500-999/1000', true]);
          const suffix = await ranged('bytes=-5');
          expect([suffix.status, suffix.headers['content-range'], suffix.raw.equals(bytes.subarray(995))]).toEqual([206, 'bytes 995-999/1000', true]);
          const clipped = await ranged('bytes=990-5000');
          expect([clipped.status, clipped.headers['content-range'], clipped.raw.length]).toEqual([206, 'bytes 990-999/1000', 10]);
          for (const bad of ['bytes=1000-', 'bytes=5-3', 'bytes=abc', 'bytes=-0', 'bytes=-']) {
            const refused = await ranged(bad);
            expect([bad, refused.status, refused.headers['content-range'], refused.raw.length]).toEqual([bad, 416, 'bytes */1000', 0]);
          }
          // Several ranges are not supported, another unit is not ours, a stale If-Range wants it all: the whole file.
          for (const [range, extra] of [['bytes=0-1,5-6', {}], ['items=0-1', {}], ['bytes=0-9', { 'if-range': '"stale"' }]] as const) {
            const whole = await ranged(range, extra);
            expect([range, whole.status, whole.raw.length]).toEqual([range, 200, 1000]);
          }
          expect((await ranged('bytes=0-9', { 'if-range': `"${sha256(bytes)}"` })).status).toBe(206);
        });

        it('lets go of the content when a download is cut short or answered without a body', async () => {
          // A file handle nobody closed is closed by the garbage collector, with a warning: collect
          // now, so that a leak shows as that warning rather than going unseen.
          const warnings: string[] = [];
          const onWarning = (warning: Error) => warnings.push(warning.message);
          process.on('warning', onWarning);
          const big = await uploaded('photos', Buffer.alloc(4 * MiB, 9), 'big.bin', 'application/octet-stream');
          for (let i = 0; i < 3; i++) await abortedDownload(`${baseUrl}/v1/collections/photos/files/${big}/content`, bearer(keys.filesRead));
          const noBody: Record<string, string>[] = [{ range: 'bytes=9999999-' }, { 'if-none-match': `"${sha256(Buffer.alloc(4 * MiB, 9))}"` }];
          for (const headers of noBody) {
            await download('photos', big, { ...bearer(keys.filesRead), ...headers });
          }
          await send({ method: 'HEAD', url: `/v1/collections/photos/files/${big}/content`, headers: bearer(keys.filesRead) });
          await sleep(300);
          collectGarbage();
          await sleep(100);
          process.off('warning', onWarning);
          expect(warnings.filter((message) => /file descriptor|FileHandle/i.test(message))).toEqual([]);
          if (store === 'disk') {
            // No file descriptor of this process still points into the store.
            const open = async () => fs.readdirSync('/proc/self/fd').map((fd) => {
              try {
                return fs.readlinkSync(`/proc/self/fd/${fd}`);
              } catch {
                return '';
              }
            }).filter((target) => target.startsWith(path.join(dataDir, 'files')));
            for (let attempt = 0; attempt < 30 && (await open()).length > 0; attempt++) await sleep(100);
            expect(await open()).toEqual([]);
          }
          expect((await download('photos', big)).raw.length).toBe(4 * MiB);
        });

        it('serves types a browser would run (HTML, SVG, JavaScript, XML) as attachments, with their stored type', async () => {
          for (const [type, inline] of [
            ['text/html', false],
            ['text/html; charset=utf-8', false],
            ['image/svg+xml', false],
            ['application/javascript', false],
            ['text/javascript', false],
            ['application/xhtml+xml', false],
            ['text/xml', false],
            ['application/x-unknown-thing', false],
            ['image/png', true],
            ['application/pdf', true],
          ] as const) {
            const id = await uploaded('photos', Buffer.from('<script>alert(1)</script>'), 'page', type);
            const reply = await download('photos', id, bearer(keys.filesRead));
            expect([type, reply.headers['content-type'], String(reply.headers['content-disposition']).split(';')[0]]).toEqual([type, type, inline ? 'inline' : 'attachment']);
            expect(reply.headers['x-content-type-options']).toBe('nosniff');
            if (!inline) expect(reply.headers['content-security-policy']).toBe("default-src 'none'; sandbox");
          }
        });
      });

      describe('attach and detach', () => {
        it('attaches a file to records of its collection, listed in their files, each change a new ETag and a record.updated', async () => {
          const fileId = await uploaded('photos');
          const recordA = await newRecord('photos', { title: 'a' });
          const recordB = await newRecord('photos', { title: 'b' });
          const before = (await outbox(t)).length;

          const attached = await attach('photos', recordA, fileId);
          expect(attached.status).toBe(200);
          expect(attached.body).toMatchObject({ id: recordA, files: [fileId], data: { title: 'a' } });
          expect(attached.headers.etag).toBe('"2"');
          expect((await attach('photos', recordB, fileId)).body.files).toEqual([fileId]);

          const events = (await outbox(t)).slice(before);
          expect(events.map((event) => [event.type, event.data.record.id])).toEqual([['record.updated', recordA], ['record.updated', recordB]]);
          expect(events[0]!.data.record.data).toEqual({ title: 'a' });

          // Again: nothing changes, nothing is emitted.
          const again = await attach('photos', recordA, fileId);
          expect([again.status, again.headers.etag, again.body.files]).toEqual([200, '"2"', [fileId]]);
          expect((await outbox(t)).length).toBe(before + 2);

          const read = await send({ method: 'GET', url: `/v1/collections/photos/records/${recordA}`, headers: bearer(keys.recordsRead) });
          expect(read.body.files).toEqual([fileId]);
          const list = await send({ method: 'GET', url: '/v1/collections/photos/records?limit=1000', headers: bearer(keys.recordsRead) });
          expect(list.body.data.find((record: { id: string }) => record.id === recordB).files).toEqual([fileId]);
          const updated = await send({ method: 'PATCH', url: `/v1/collections/photos/records/${recordA}`, headers: { ...bearer(keys.all), 'content-type': 'application/json' }, payload: { data: { more: 1 } } });
          expect(updated.body.files).toEqual([fileId]);

          const second = await uploaded('photos');
          expect((await attach('photos', recordA, second)).body.files).toEqual([fileId, second]);

          const detached = await send({ method: 'DELETE', url: `/v1/collections/photos/records/${recordA}/files/${fileId}`, headers: bearer(keys.filesWrite) });
          expect(detached.status).toBe(200);
          expect(detached.body.files).toEqual([second]);
          expect((await outbox(t)).at(-1)).toMatchObject({ type: 'record.updated', data: { record: { id: recordA } } });
          // The file stays: B still holds it.
          expect((await download('photos', fileId)).status).toBe(200);
          expectError(await send({ method: 'DELETE', url: `/v1/collections/photos/records/${recordA}/files/${fileId}`, headers: bearer(keys.all) }), 404, 'NOT_FOUND');
        });

        it('refuses a file of another collection, an unknown file, and a record in the trash', async () => {
          const elsewhere = await uploaded('other');
          const recordId = await newRecord('photos');
          const refused = expectError(await attach('photos', recordId, elsewhere), 409, 'CONFLICT');
          expect(refused.details).toEqual({ field: 'body.fileId' });
          expectError(await attach('photos', recordId, 'fil_00000000000000000000000000'), 404, 'NOT_FOUND');
          expectError(await attach('photos', recordId, 'not-an-id'), 400, 'INVALID_REQUEST');
          const fileId = await uploaded('photos');
          expect((await send({ method: 'DELETE', url: `/v1/collections/photos/records/${recordId}`, headers: bearer(keys.all) })).status).toBe(200);
          expectError(await attach('photos', recordId, fileId), 409, 'CONFLICT');
          // Nothing was attached by any of these.
          const read = await send({ method: 'GET', url: `/v1/collections/photos/records/${recordId}?trashed=true`, headers: bearer(keys.all) });
          expect(read.body.files).toEqual([]);
        });
      });

      describe('delete and the trash', () => {
        it('DELETE removes the file, its content and its attachments (record.updated for the record)', async () => {
          const fileId = await uploaded('photos');
          const recordId = await newRecord('photos');
          await attach('photos', recordId, fileId);
          const before = (await outbox(t)).length;
          const deleted = await send({ method: 'DELETE', url: `/v1/collections/photos/files/${fileId}`, headers: bearer(keys.filesWrite) });
          expect(deleted.status).toBe(204);
          expectError(await download('photos', fileId), 404, 'NOT_FOUND');
          expectError(await send({ method: 'GET', url: `/v1/collections/photos/files/${fileId}`, headers: bearer(keys.all) }), 404, 'NOT_FOUND');
          const read = await send({ method: 'GET', url: `/v1/collections/photos/records/${recordId}`, headers: bearer(keys.all) });
          expect([read.body.files, read.headers.etag]).toEqual([[], '"3"']);
          expect((await outbox(t)).slice(before).map((event) => [event.type, event.data.record.id])).toEqual([['record.updated', recordId]]);
          expectError(await send({ method: 'DELETE', url: `/v1/collections/photos/files/${fileId}`, headers: bearer(keys.all) }), 404, 'NOT_FOUND');
          await expectStoreMatchesRows();
          expect(await t.deps.db.selectFrom('file_deletions').selectAll().execute()).toEqual([]);
        });

        it('a record in the trash keeps its files; deleting it for good removes the files nothing else holds', async () => {
          const onlyHere = await uploaded('photos');
          const shared = await uploaded('photos');
          const loose = await uploaded('photos');
          const recordId = await newRecord('photos');
          const otherRecord = await newRecord('photos');
          await attach('photos', recordId, onlyHere);
          await attach('photos', recordId, shared);
          await attach('photos', otherRecord, shared);

          expect((await send({ method: 'DELETE', url: `/v1/collections/photos/records/${recordId}`, headers: bearer(keys.all) })).status).toBe(200);
          expect((await download('photos', onlyHere)).status).toBe(200);
          const restored = await send({ method: 'POST', url: `/v1/collections/photos/records/${recordId}/restore`, headers: bearer(keys.all) });
          expect(restored.body.files).toEqual([onlyHere, shared]);

          const purged = await owner.delete(`/v1/collections/photos/records/${recordId}?permanent=true`);
          expect(purged.status).toBe(204);
          expectError(await download('photos', onlyHere), 404, 'NOT_FOUND');
          expect((await download('photos', shared)).status).toBe(200);
          expect((await download('photos', loose)).status).toBe(200);
          await expectStoreMatchesRows();
        });

        it('a collection in the trash keeps its files; deleting it for good removes all of them, content included', async () => {
          const created = await owner.post('/v1/collections', { name: 'doomed' });
          const fileId = await uploaded('doomed');
          const attachedId = await uploaded('doomed');
          await attach('doomed', await newRecord('doomed'), attachedId);
          const keysBefore = (await stored()).objects.filter((key) => key.includes(created.body.id));
          expect(keysBefore).toHaveLength(2);

          expect((await owner.delete('/v1/collections/doomed')).status).toBe(200);
          expectError(await download('doomed', fileId), 404, 'NOT_FOUND');
          expect((await owner.post('/v1/collections/doomed/restore')).status).toBe(200);
          expect((await download('doomed', fileId)).raw.equals(PHOTO)).toBe(true);

          expect((await owner.delete('/v1/collections/doomed?permanent=true')).status).toBe(204);
          expect((await stored()).objects.filter((key) => key.includes(created.body.id))).toEqual([]);
          expect(await t.deps.db.selectFrom('files').select('id').where('collection_id', '=', created.body.id).execute()).toEqual([]);
          await expectStoreMatchesRows();
        });
      });

      describe('who may', () => {
        it('a files:read key downloads; a records:read-only key is refused the content and the metadata but sees the record\'s files', async () => {
          const fileId = await uploaded('photos');
          const recordId = await newRecord('photos');
          await attach('photos', recordId, fileId);
          expect((await download('photos', fileId, bearer(keys.filesRead))).raw.equals(PHOTO)).toBe(true);
          const refused = expectError(await download('photos', fileId, bearer(keys.recordsRead)), 403, 'MISSING_SCOPE');
          expect(refused.details?.requiredScope).toBe('files:read');
          expectError(await send({ method: 'GET', url: `/v1/collections/photos/files/${fileId}`, headers: bearer(keys.recordsRead) }), 403, 'MISSING_SCOPE');
          expect((await send({ method: 'GET', url: `/v1/collections/photos/records/${recordId}`, headers: bearer(keys.recordsRead) })).body.files).toEqual([fileId]);
          expect(expectError(await upload('photos', PHOTO, { name: 'x.png', key: keys.filesRead }), 403, 'MISSING_SCOPE').details?.requiredScope).toBe('files:write');
          expectError(await download('photos', fileId, bearer(keys.onlyOther)), 403, 'COLLECTION_NOT_ALLOWED');
          expectError(await download(collections.photos, fileId, {}), 401, 'UNAUTHENTICATED');
          expectError(await download('photos', fileId, { 'x-baas-workspace': workspaceId }), 401, 'UNAUTHENTICATED');
          // By name without its workspace, an anonymous caller is told to send the header or the id,
          // whether or not the collection is public (docs/data-api.md, "Public collections").
          expectError(await download('photos', fileId, {}), 400, 'INVALID_REQUEST');
          // A file id named under another collection is not found there.
          expectError(await download('other', fileId), 404, 'NOT_FOUND');
        });

        it('anonymous callers download the files live records of a public collection hold, and nothing else', async () => {
          const attachedId = await uploaded('pub');
          const looseId = await uploaded('pub');
          const recordId = await newRecord('pub');
          await attach('pub', recordId, attachedId);
          const anonymous = await download(collections.pub, attachedId, {});
          expect([anonymous.status, anonymous.raw.equals(PHOTO)]).toEqual([200, true]);
          expect((await send({ method: 'GET', url: `/v1/collections/${collections.pub}/files/${attachedId}`, headers: {} })).body.id).toBe(attachedId);
          expect((await download('pub', attachedId, { 'x-baas-workspace': workspaceId })).status).toBe(200);
          expectError(await download(collections.pub, looseId, {}), 404, 'NOT_FOUND');
          // The same file through a private collection's path, or a private collection's file: as for any private read.
          expectError(await download(collections.photos, attachedId, {}), 401, 'UNAUTHENTICATED');
          expectError(await send({ method: 'POST', url: `/v1/collections/${collections.pub}/files?name=x.png`, payload: PHOTO }), 401, 'UNAUTHENTICATED');
          // Trashed, the record shares nothing.
          await send({ method: 'DELETE', url: `/v1/collections/pub/records/${recordId}`, headers: bearer(keys.all) });
          expectError(await download(collections.pub, attachedId, {}), 404, 'NOT_FOUND');
          expect((await download('pub', attachedId, bearer(keys.filesRead))).status).toBe(200);
        });

        it('another workspace cannot see the file', async () => {
          const fileId = await uploaded('photos');
          const stranger = await owner.post('/v1/workspaces', { name: 'elsewhere' });
          expect(stranger.status).toBe(201);
          const headers = { cookie: `plainbase_session=${owner.cookie}`, 'x-baas-workspace': stranger.body.id };
          expect((await send({ method: 'POST', url: '/v1/collections', headers: { ...headers, 'content-type': 'application/json' }, payload: { name: 'photos' } })).status).toBe(201);
          expectError(await download('photos', fileId, headers), 404, 'NOT_FOUND');
          expectError(await send({ method: 'DELETE', url: `/v1/collections/photos/files/${fileId}`, headers }), 404, 'NOT_FOUND');
          expect((await download('photos', fileId)).status).toBe(200);
        });
      });
    });
  }
});

/** Bytes whose value depends on their offset, so any shifted range shows. */
function patternBytes(start: number, length: number): Buffer {
  const bytes = Buffer.alloc(length);
  for (let i = 0; i < length; i++) bytes[i] = ((start + i) * 31 + ((start + i) >> 8)) & 0xff;
  return bytes;
}

/** Streams `size` pattern bytes in 64 KiB chunks with chunked encoding; answers status and body. */
function streamUpload(url: string, headers: Record<string, string>, size: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/octet-stream' } }, (response) => {
      const parts: Buffer[] = [];
      response.on('data', (part: Buffer) => parts.push(part));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(parts).toString('utf8') }));
    });
    // A refusal arrives while we still write; the write errors that follow are expected.
    request.on('error', (error) => setTimeout(() => reject(error), 2000));
    let sent = 0;
    const pump = () => {
      while (sent < size && !request.destroyed) {
        const length = Math.min(64 * 1024, size - sent);
        const chunk = patternBytes(sent, length);
        sent += length;
        if (!request.write(chunk)) return void request.once('drain', pump);
      }
      if (!request.destroyed) request.end();
    };
    pump();
  });
}

/** A full garbage collection, now (the flag is switched on for this call only). */
function collectGarbage(): void {
  v8.setFlagsFromString('--expose-gc');
  (vm.runInNewContext('gc') as () => void)();
  v8.setFlagsFromString('--no-expose-gc');
}

/** Starts a download, reads its first bytes, then drops the connection. */
function abortedDownload(url: string, headers: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers }, (response) => {
      response.once('data', () => {
        request.destroy();
        resolve();
      });
    });
    request.on('error', (error) => (request.destroyed ? resolve() : reject(error)));
  });
}

/** Declares `declared` bytes, sends `prefix` and then `sendBytes`, then drops the connection. */
async function abortedUpload(url: string, headers: Record<string, string>, declared: number, sendBytes: number, prefix = Buffer.alloc(0)): Promise<void> {
  await new Promise<void>((resolve) => {
    const request = http.request(url, { method: 'POST', headers: { 'content-type': 'application/octet-stream', ...headers, 'content-length': String(declared + prefix.length) } });
    request.on('error', () => resolve());
    request.on('response', () => resolve());
    request.write(prefix);
    let sent = 0;
    const pump = () => {
      while (sent < sendBytes) {
        const chunk = Buffer.alloc(64 * 1024, 7);
        sent += chunk.length;
        if (!request.write(chunk)) return void request.once('drain', pump);
      }
      // Give the server a moment to take in what was sent (and S3 its parts), then vanish.
      setTimeout(() => {
        request.destroy();
        resolve();
      }, 300);
    };
    pump();
  });
}
