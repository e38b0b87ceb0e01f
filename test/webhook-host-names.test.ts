import { execFileSync } from 'node:child_process';
import type { LookupAddress } from 'node:dns';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeSender } from '../src/delivery/guard-options.js';
import { checkedLookup } from '../src/delivery/send.js';
import type { GuardOptions } from '../src/delivery/url-guard.js';
import { DeliveryWorker } from '../src/worker/delivery-worker.js';
import type { Config } from '../src/config.js';
import { signedInOwner, type Client } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/**
 * Webhooks addressed the way real ones are: by host name. Names go through the socket's own
 * `lookup` (Node asks it for every address, for happy eyeballs), which only ever hands over
 * addresses the URL guard checked. `localhost` is resolved by the system's resolver; the other
 * names are answered by a resolver the test injects (this machine reaches no DNS server), which
 * is the same seam a real resolver plugs into.
 */

/** Bodies received, per receiver name. */
const calls = new Map<string, string[]>();
function record(name: string, body: string): void {
  calls.set(name, [...(calls.get(name) ?? []), body]);
}

function listen(server: HttpServer | HttpsServer, host: string, port = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

function receiver(name: string, make: typeof createHttpServer | typeof createHttpsServer, options: object = {}): HttpServer | HttpsServer {
  return (make as typeof createHttpServer)(options, (request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      record(name, body);
      response.writeHead(204).end();
    });
  });
}

let dir: string;
let caFile: string;
/** One receiver on both loopback addresses, one port: what `localhost` may resolve to either way. */
let dualPort: number;
let dualV4: HttpServer;
let dualV6: HttpServer | null = null;
/** An HTTPS receiver whose certificate a test CA issued for hooks.plainbase.test. */
let tlsPort: number;
let tlsServer: HttpsServer;
/** A plain receiver on 127.0.0.1 only: 127.0.0.2 on its port refuses connections. */
let v4OnlyPort: number;
let v4Only: HttpServer;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'plainbase-names-'));
  const file = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
  caFile = file('ca.pem');
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('ca-key.pem'), '-out', caFile, '-days', '2', '-subj', '/CN=Plainbase test CA');
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('leaf-key.pem'), '-out', file('leaf.csr'), '-subj', '/CN=hooks.plainbase.test');
  writeFileSync(file('leaf.ext'), 'subjectAltName=DNS:hooks.plainbase.test\n');
  openssl('x509', '-req', '-in', file('leaf.csr'), '-CA', caFile, '-CAkey', file('ca-key.pem'), '-CAcreateserial', '-out', file('leaf.pem'), '-days', '2', '-extfile', file('leaf.ext'));

  dualV4 = receiver('localhost', createHttpServer) as HttpServer;
  dualPort = await listen(dualV4, '127.0.0.1');
  try {
    dualV6 = receiver('localhost', createHttpServer) as HttpServer;
    await listen(dualV6, '::1', dualPort);
  } catch {
    dualV6 = null; // a machine without IPv6 loopback: localhost is 127.0.0.1 alone there
  }
  tlsServer = receiver('tls', createHttpsServer, { key: readFileSync(file('leaf-key.pem')), cert: readFileSync(file('leaf.pem')) }) as HttpsServer;
  tlsPort = await listen(tlsServer, '127.0.0.1');
  v4Only = receiver('v4-only', createHttpServer) as HttpServer;
  v4OnlyPort = await listen(v4Only, '127.0.0.1');
});

afterAll(async () => {
  for (const server of [dualV4, dualV6, tlsServer, v4Only]) {
    if (!server) continue;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('the socket lookup', () => {
  const answers: Record<string, string[]> = {
    'two.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
    'mixed.example.com': ['93.184.216.34', '10.0.0.7'],
  };
  const guard: GuardOptions = { allowHttp: false, allowPrivate: false, resolve: async (name) => answers[name] ?? [] };
  const lookup = (name: string, options: { all?: boolean; family?: number }) =>
    new Promise<{ error: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family?: number }>((resolve) =>
      checkedLookup(guard)(name, options, (error, address, family) => resolve({ error, address, family })),
    );

  it('answers a list of every checked address when asked for all (happy eyeballs)', async () => {
    expect(await lookup('two.example.com', { all: true })).toEqual({
      error: null,
      address: [{ address: '93.184.216.34', family: 4 }, { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 }],
      family: undefined,
    });
  });

  it('answers one address and its family when asked for one, of the family asked for', async () => {
    expect(await lookup('two.example.com', {})).toEqual({ error: null, address: '93.184.216.34', family: 4 });
    expect(await lookup('two.example.com', { family: 6 })).toEqual({ error: null, address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 });
    expect(await lookup('two.example.com', { all: true, family: 6 })).toMatchObject({ address: [{ family: 6 }] });
  });

  it('answers an error, in either shape, for a name with one private address among public ones', async () => {
    for (const options of [{ all: true }, {}]) {
      const { error } = await lookup('mixed.example.com', options);
      expect(error?.message).toMatch(/private or reserved/);
    }
    expect((await lookup('nowhere.example.com', { all: true })).error?.message).toMatch(/does not resolve/);
  });
});

describeEachEngine('webhooks addressed by host name', (engine) => {
  /** One app per case: each needs its own settings (mode, resolver, trusted CA). */
  async function withApp(overrides: Partial<Config>, resolve: ((name: string) => Promise<string[]>) | null, body: (t: TestApp, owner: Client) => Promise<void>) {
    const t = await startTestApp(engine, overrides);
    if (resolve) t.deps.resolveHost = resolve;
    try {
      const owner = await signedInOwner(t);
      await owner.post('/v1/collections', { name: 'leads' });
      await body(t, owner);
    } finally {
      await closeSender(t.deps);
      await t.close();
    }
  }

  async function deliveryOf(owner: Client, webhookId: string) {
    const [delivery] = (await owner.get(`/v1/webhooks/${webhookId}/deliveries`)).body.data;
    return (await owner.get(`/v1/webhooks/${webhookId}/deliveries/${delivery.id}`)).body;
  }

  it('delivers over plain HTTP to localhost in development mode, through the system resolver', async () => {
    await withApp({ env: 'development', webhookAllowPrivate: true }, null, async (t, owner) => {
      const created = await owner.post('/v1/webhooks', { url: `http://localhost:${dualPort}/hook`, events: ['record.created'] });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const before = calls.get('localhost')?.length ?? 0;
      await owner.post('/v1/collections/leads/records', { data: { via: 'localhost' } });
      await new DeliveryWorker(t.deps).drain();
      expect(await deliveryOf(owner, created.body.id)).toMatchObject({ state: 'succeeded', attempts: [{ status: 204, error: null }] });
      expect(JSON.parse(calls.get('localhost')![before]!).data.record.data).toEqual({ via: 'localhost' });
    });
  });

  it('delivers over HTTPS to a name whose certificate a trusted CA issued for that name, and verifies the name', async () => {
    const resolve = async (name: string) => (name.endsWith('.plainbase.test') ? ['127.0.0.1'] : []);
    // Production mode (https only); private targets allowed because the receiver is on this machine.
    await withApp({ webhookAllowPrivate: true, webhookCaFile: caFile }, resolve, async (t, owner) => {
      const good = await owner.post('/v1/webhooks', { url: `https://hooks.plainbase.test:${tlsPort}/hook`, events: ['record.created'] });
      const wrongName = await owner.post('/v1/webhooks', { url: `https://other.plainbase.test:${tlsPort}/hook`, events: ['record.created'] });
      expect([good.status, wrongName.status]).toEqual([201, 201]);
      const before = calls.get('tls')?.length ?? 0;
      await owner.post('/v1/collections/leads/records', { data: { via: 'tls' } });
      await new DeliveryWorker(t.deps).drain();
      expect(await deliveryOf(owner, good.body.id)).toMatchObject({ state: 'succeeded', attempts: [{ status: 204, error: null }] });
      // The same server, reached under a name its certificate does not carry: refused by TLS.
      const refused = await deliveryOf(owner, wrongName.body.id);
      expect(refused).toMatchObject({ state: 'pending', attempts: [{ status: null }] });
      expect(refused.attempts[0].error).toMatch(/ERR_TLS_CERT_ALTNAME_INVALID|altnames/i);
      expect(calls.get('tls')!.slice(before).map((body) => JSON.parse(body).data.record.data)).toEqual([{ via: 'tls' }]);
    });
  });

  it('tries every checked address of a name in turn: the first refuses, the second answers', async () => {
    const resolve = async (name: string) => (name === 'pair.example.com' ? ['127.0.0.2', '127.0.0.1'] : []);
    await withApp({ env: 'development', webhookAllowPrivate: true }, resolve, async (t, owner) => {
      const created = await owner.post('/v1/webhooks', { url: `http://pair.example.com:${v4OnlyPort}/hook`, events: ['record.created'] });
      expect(created.status).toBe(201);
      const before = calls.get('v4-only')?.length ?? 0;
      await owner.post('/v1/collections/leads/records', { data: { via: 'second address' } });
      await new DeliveryWorker(t.deps).drain();
      expect(await deliveryOf(owner, created.body.id)).toMatchObject({ state: 'succeeded', attempts: [{ status: 204 }] });
      expect(calls.get('v4-only')!.slice(before).map((body) => JSON.parse(body).data.record.data)).toEqual([{ via: 'second address' }]);
    });
  });

  it('refuses at the attempt a name that resolves to a private address in production mode, before any socket opens', async () => {
    const answers = ['93.184.216.34'];
    const resolve = async (name: string) => (name === 'moving.example.com' ? answers : []);
    await withApp({ webhookAllowPrivate: false, webhookCaFile: caFile }, resolve, async (t, owner) => {
      const created = await owner.post('/v1/webhooks', { url: `https://moving.example.com:${tlsPort}/hook`, events: ['record.created'] });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      // Public when saved; loopback now, where the receiver really listens.
      answers[0] = '127.0.0.1';
      const before = calls.get('tls')?.length ?? 0;
      await owner.post('/v1/collections/leads/records', { data: {} });
      await new DeliveryWorker(t.deps).drain();
      expect(await deliveryOf(owner, created.body.id)).toMatchObject({ state: 'pending', attempts: [{ status: null, error: 'destination not allowed' }] });
      expect(calls.get('tls')?.length ?? 0).toBe(before);
    });
  });
});
