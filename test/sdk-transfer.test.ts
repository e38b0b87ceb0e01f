import { randomBytes } from 'node:crypto';
import { createReadStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { Plainbase, type Progress } from '../sdk/src/index.js';
import { describeEachEngine } from './support/harness.js';
import { startSdkWorld, type SdkWorld } from './support/sdk-world.js';
import { rejection } from './support/sdk-rejection.js';

const ALL = ['records:read', 'records:create', 'records:update', 'files:read', 'files:write'];


/** Bytes reported are never fewer than before, and end at the whole body. */
function expectProgress(reports: Progress[], bytes: number, total: number | null): void {
  expect(reports.length).toBeGreaterThan(2);
  expect(reports[0]).toEqual({ bytes: 0, total });
  for (let i = 1; i < reports.length; i++) expect(reports[i]!.bytes).toBeGreaterThanOrEqual(reports[i - 1]!.bytes);
  expect(reports.at(-1)).toEqual({ bytes, total });
}

describeEachEngine('SDK: import, export and files against a live server', (engine) => {
  let w: SdkWorld;
  let pb: Plainbase;
  let folder: string;
  beforeEach(async () => {
    w = await startSdkWorld(engine);
    expect((await w.main.owner.post('/v1/collections', { name: 'leads' })).status).toBe(201);
    pb = new Plainbase({ url: w.base, key: await w.main.key(ALL) });
    folder = mkdtempSync(path.join(os.tmpdir(), 'plainbase-sdk-'));
  });
  afterEach(async () => {
    rmSync(folder, { recursive: true, force: true });
    await w?.close();
  });

  it('imports NDJSON from a file stream with progress, JSON from text and CSV from a Blob, and reports refused rows', async () => {
    const records = pb.collection('leads').records;
    const file = path.join(folder, 'leads.ndjson');
    const lines = Array.from({ length: 3000 }, (_, i) => JSON.stringify({ name: `lead ${i}`, n: i, note: 'x'.repeat(40) }));
    writeFileSync(file, `${lines.join('\n')}\n`);
    const size = Buffer.byteLength(`${lines.join('\n')}\n`);

    const reports: Progress[] = [];
    const report = await records.import(createReadStream(file, { highWaterMark: 16 * 1024 }), { format: 'ndjson', onProgress: (p) => reports.push(p) });
    expect(report).toEqual({ imported: 3000, rejected: [], rejectedCount: 0 });
    expectProgress(reports, size, null);

    const json = await records.import(JSON.stringify([{ name: 'from json', n: -1 }]), { format: 'json' });
    expect(json.imported).toBe(1);
    const csv = new Blob(['name,n\nfrom csv,-2\n'], { type: 'text/csv' });
    const blobReports: Progress[] = [];
    // The format comes from the Blob's type.
    expect((await records.import(csv, { onProgress: (p) => blobReports.push(p) })).imported).toBe(1);
    expect(blobReports.at(-1)).toEqual({ bytes: csv.size, total: csv.size });
    // Without a schema a CSV cell is text (docs/import-export.md).
    expect((await records.page({ filter: 'data.name ~ "from "', sort: 'data.name' })).data.map((r) => r.data)).toEqual([{ name: 'from csv', n: '-2' }, { name: 'from json', n: -1 }]);

    // partial keeps the good rows and says which were refused; all refuses the whole import.
    const partial = await records.import(Readable.from(['{"name":"good"}\n', 'not json\n', '[1]\n', '{"name":"also good"}\n']), { mode: 'partial' });
    expect([partial.imported, partial.rejectedCount, partial.rejected.map((r) => r.line)]).toEqual([2, 2, [2, 3]]);
    const refused = await rejection(records.import('{"name":"kept?"}\nnot json\n'));
    expect([refused.status, refused.code]).toEqual([400, 'INVALID_REQUEST']);
    expect((await records.page({ filter: 'data.name = "kept?"' })).data).toEqual([]);
  });

  it('exports the records as a web stream, NDJSON and CSV, and says why before any byte when it cannot', async () => {
    const records = pb.collection('leads').records;
    await records.import(Array.from({ length: 120 }, (_, i) => JSON.stringify({ name: `lead ${i}`, n: i })).join('\n'));

    const ndjson = await records.export({ format: 'ndjson' });
    expect(ndjson).toBeInstanceOf(ReadableStream);
    const rows = (await new Response(ndjson).text()).trim().split('\n').map((line) => JSON.parse(line));
    expect(rows.map((row) => row.data.n)).toEqual(Array.from({ length: 120 }, (_, i) => i));

    const csv = await records.export({ format: 'csv', filter: 'data.n < 3', fields: 'data.name,data.n' });
    // Read as it arrives, chunk by chunk.
    const reader = csv.getReader();
    const decoder = new TextDecoder();
    let text = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += decoder.decode(chunk.value, { stream: true });
    const [header, ...body] = text.trim().split(/\r?\n/);
    expect(header).toBe('id,createdAt,updatedAt,name,n');
    expect(body.map((line) => line.split(',').slice(3).join(','))).toEqual(['lead 0,0', 'lead 1,1', 'lead 2,2']);

    expect((await rejection(records.export({ filter: 'data.n >>> 1' }))).code).toBe('INVALID_REQUEST');
    const readOnly = new Plainbase({ url: w.base, key: await w.main.key(['files:read']) });
    expect((await rejection(readOnly.collection('leads').records.export())).details).toEqual({ requiredScope: 'records:read' });
  });

  it('uploads bytes, a File and a stream, downloads whole and in part, attaches to a record, deletes', async () => {
    const { files, records } = pb.collection('leads');
    const content = randomBytes(100_000);
    const reports: Progress[] = [];
    const streamed = await files.upload(Readable.from([content.subarray(0, 60_000), content.subarray(60_000)]), {
      name: 'photo.bin',
      contentType: 'application/octet-stream',
      onProgress: (p) => reports.push(p),
    });
    expect(streamed).toMatchObject({ name: 'photo.bin', size: 100_000, contentType: 'application/octet-stream' });
    expect(reports.at(-1)).toEqual({ bytes: 100_000, total: null });

    const text = await files.upload(new File(['hello, world'], 'hello.txt', { type: 'text/plain' }));
    expect(text).toMatchObject({ name: 'hello.txt', size: 12, contentType: 'text/plain' });
    const bytes = await files.upload(new Uint8Array([1, 2, 3]), { name: 'three.bin' });
    expect([bytes.size, bytes.contentType]).toEqual([3, 'application/octet-stream']);
    // A mistake in the call itself is the program's, found before any request.
    await expect(files.upload('no name')).rejects.toThrow(/name the file/);

    const whole = await files.download(streamed.id);
    expect([whole.partial, whole.size, whole.etag]).toEqual([false, 100_000, `"${streamed.sha256}"`]);
    expect(Buffer.from(await whole.arrayBuffer()).equals(content)).toBe(true);
    const part = await files.download(streamed.id, { range: { start: 10, end: 19 } });
    expect([part.partial, part.contentRange, part.size]).toEqual([true, 'bytes 10-19/100000', 10]);
    expect(Buffer.from(await new Response(part.body).arrayBuffer()).equals(content.subarray(10, 20))).toBe(true);
    expect(await (await files.download(text.id)).text()).toBe('hello, world');

    const rec = await records.create({ name: 'with photo' });
    expect((await records.attachFile(rec.id, streamed.id)).files).toEqual([streamed.id]);
    expect((await files.page()).data.map((f) => f.id).sort()).toEqual([streamed.id, text.id, bytes.id].sort());
    expect((await records.detachFile(rec.id, streamed.id)).files).toEqual([]);
    await files.delete(bytes.id);
    expect((await rejection(files.get(bytes.id))).code).toBe('NOT_FOUND');
    expect((await files.get(text.id)).sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('reads a public collection anonymously: by name with the workspace, by id without; without either it says what to send', async () => {
    const owner = w.main.owner;
    const { body: posts } = await owner.post('/v1/collections', { name: 'posts', public: true });
    const { body: post } = await owner.post('/v1/collections/posts/records', { data: { title: 'Hello' } });
    const { body: picture } = await owner.call('POST', '/v1/collections/posts/files?name=p.txt', 'picture', { 'content-type': 'text/plain' });
    await owner.post(`/v1/collections/posts/records/${post.id}/files`, { fileId: picture.id });

    const withWorkspace = new Plainbase({ url: w.base, workspace: w.main.id });
    expect((await withWorkspace.collection('posts').records.list().toArray()).map((r) => r.data)).toEqual([{ title: 'Hello' }]);
    const anonymous = new Plainbase({ url: w.base });
    expect((await anonymous.collection(posts.id).records.get(post.id)).data).toEqual({ title: 'Hello' });
    expect(await (await anonymous.collection(posts.id).files.download(picture.id)).text()).toBe('picture');

    const hint = await rejection(anonymous.collection('posts').records.list().toArray());
    expect([hint.status, hint.code, hint.details]).toEqual([400, 'INVALID_REQUEST', { field: 'headers.x-baas-workspace', header: 'x-baas-workspace' }]);
    expect(hint.message).toMatch(/x-baas-workspace.*col_/);
    // A private collection stays a 401 however it is named.
    expect((await rejection(withWorkspace.collection('leads').records.list().toArray())).code).toBe('UNAUTHENTICATED');
    expect((await rejection(withWorkspace.collection('posts').records.create({ title: 'spam' }))).code).toBe('UNAUTHENTICATED');
  });
});
