import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Plainbase, PlainbaseError } from '../sdk/src/index.js';
import { describeEachEngine } from './support/harness.js';
import { freePort } from './support/server-process.js';
import { startSdkWorld, type SdkWorld } from './support/sdk-world.js';
import { rejection } from './support/sdk-rejection.js';


describeEachEngine('SDK: errors against a live server', (engine) => {
  let w: SdkWorld;
  beforeEach(async () => {
    w = await startSdkWorld(engine);
    expect((await w.main.owner.post('/v1/collections', { name: 'leads' })).status).toBe(201);
  });
  afterEach(async () => {
    await w?.close();
  });

  it('throws one PlainbaseError carrying the API\'s code, status, requestId and details, and never the key', async () => {
    const key = await w.main.key(['records:read']);
    const leads = new Plainbase({ url: w.base, key }).collection('leads').records;

    const scope = await rejection(leads.create({ name: 'Ada' }));
    expect(scope).toBeInstanceOf(Error);
    expect([scope.name, scope.status, scope.code, scope.details]).toEqual(['PlainbaseError', 403, 'MISSING_SCOPE', { requiredScope: 'records:create' }]);
    expect(scope.message).toMatch(/records:create/);
    expect(scope.requestId).toMatch(/^req_/);

    const filter = await rejection(leads.list({ filter: 'data.n >= ' }).toArray());
    expect([filter.status, filter.code, typeof filter.details?.position]).toEqual([400, 'INVALID_REQUEST', 'number']);
    const missing = await rejection(new Plainbase({ url: w.base, key }).collection('nothing').records.page());
    expect([missing.status, missing.code]).toEqual([404, 'NOT_FOUND']);

    const revoked = new Plainbase({ url: w.base, key: `${key.slice(0, -3)}abc` });
    const invalid = await rejection(revoked.me());
    expect([invalid.status, invalid.code]).toEqual([401, 'INVALID_API_KEY']);
    for (const error of [scope, filter, missing, invalid]) {
      expect(`${error.message} ${JSON.stringify(error)} ${error.stack}`).not.toContain(key.slice(8));
    }
  });

  it('keeps hostile names and ids inside their own path segment, and answers huge input with a 4xx', async () => {
    const pb = new Plainbase({ url: w.base, key: await w.main.key(['records:read', 'records:create', 'collections:read']) });
    const rec = await pb.collection('leads').records.create({ name: 'Ada' });
    // Each would reach another route or record if it were not encoded as one segment.
    for (const [col, id] of [['../../v1/me', rec.id], ['leads', `../../../me`], ['leads', `${rec.id}?trashed=true`], ['leads/records', rec.id], ['leads', `${rec.id}#x`], ['%2e%2e', rec.id]]) {
      const error = await rejection(pb.collection(col!).records.get(id!));
      expect([400, 404], `${col} ${id}`).toContain(error.status);
    }
    const huge = await rejection(pb.collection('leads').records.page({ filter: `data.name = "${'x'.repeat(10_000)}"` }));
    expect([huge.status, huge.code]).toEqual([400, 'INVALID_REQUEST']);
    const large = await rejection(pb.collection('leads').records.create({ name: 'x'.repeat(2 * 1024 * 1024) }));
    expect([large.status, large.code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    // Whatever the server makes of a field named __proto__, the answer read back pollutes nothing.
    const proto = await pb.collection('leads').records.create(JSON.parse('{"__proto__": {"admin": true}}')).catch((error: PlainbaseError) => error);
    if (proto instanceof PlainbaseError) expect(proto.status).toBe(400);
    else expect(Object.hasOwn(proto.data, '__proto__') || Object.keys(proto.data).length === 0).toBe(true);
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });

  it('says PERSON_REQUIRED when a key asks for what only a person may do', async () => {
    const pb = new Plainbase({ url: w.base, key: await w.main.key(['records:read']) });
    const error = await rejection(pb.request('get', '/v1/keys'));
    expect([error.status, error.code]).toEqual([403, 'PERSON_REQUIRED']);
  });
});

// No Plainbase server and no database in these: nothing to run on an engine.
describe('SDK: failures that are not the API\'s answers', () => {
  let foreign: Server;
  let foreignUrl: string;
  beforeEach(async () => {
    foreign = createServer((_request, response) => response.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad Gateway</h1>'));
    await new Promise<void>((resolve) => foreign.listen(0, '127.0.0.1', resolve));
    foreignUrl = `http://127.0.0.1:${(foreign.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    foreign.closeAllConnections();
    await new Promise((resolve) => foreign.close(resolve));
  });

  it('turns no answer and a foreign answer into PlainbaseError too, and leaves the caller\'s own abort alone', async () => {
    const nobody = `http://127.0.0.1:${await freePort()}`;
    const down = await rejection(new Plainbase({ url: nobody, key: 'pb_live_x' }).me());
    expect([down.code, down.status, down.requestId]).toEqual(['NETWORK_ERROR', 0, null]);
    expect(down.cause).toBeInstanceOf(Error);
    expect(down.message).toContain(nobody);

    const proxy = await rejection(new Plainbase({ url: foreignUrl }).collection('leads').records.page());
    expect([proxy.code, proxy.status]).toEqual(['UNEXPECTED_RESPONSE', 502]);
    expect(proxy.details).toEqual({ body: '<h1>Bad Gateway</h1>' });

    const controller = new AbortController();
    controller.abort();
    const aborted = new Plainbase({ url: foreignUrl }).me({ signal: controller.signal });
    await expect(aborted).rejects.toMatchObject({ name: 'AbortError' });
    await expect(aborted).rejects.not.toBeInstanceOf(PlainbaseError);
  });

  it('refuses to be set up without an http(s) address', () => {
    expect(() => new Plainbase({ url: 'ftp://example.com' })).toThrow(TypeError);
    expect(() => new Plainbase({} as never)).toThrow(/url must be/);
  });
});
