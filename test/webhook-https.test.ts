import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { closeSender } from '../src/delivery/guard-options.js';
import { DeliveryWorker } from '../src/worker/delivery-worker.js';
import { signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp } from './support/harness.js';

/**
 * A certificate for 127.0.0.1 that no system trusts: the tests make it, the config trusts it. An
 * address literal is enough here: this is about which CAs are trusted. Names over TLS (a name
 * the certificate carries, and one it does not) are in webhook-host-names.test.ts.
 */
let dir: string;
let certFile: string;
let server: Server;
let url: string;
const received: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'plainbase-tls-'));
  certFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  server = createServer({ key: readFileSync(keyFile), cert: readFileSync(certFile) }, (request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      received.push(body);
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

describeEachEngine('webhooks over HTTPS', (engine) => {
  it('delivers to a receiver whose CA the configuration trusts, and fails with a TLS error otherwise', async () => {
    for (const trusted of [true, false]) {
      const t = await startTestApp(engine, { webhookAllowPrivate: true, webhookCaFile: trusted ? certFile : null });
      try {
        const owner = await signedInOwner(t);
        await owner.post('/v1/collections', { name: 'leads' });
        const { body: webhook } = await owner.post('/v1/webhooks', { url, events: ['record.created'] });
        const before = received.length;
        await owner.post('/v1/collections/leads/records', { data: { trusted } });
        await new DeliveryWorker(t.deps).drain();
        const [delivery] = (await owner.get(`/v1/webhooks/${webhook.id}/deliveries`)).body.data;
        const detail = (await owner.get(`/v1/webhooks/${webhook.id}/deliveries/${delivery.id}`)).body;
        if (trusted) {
          expect(detail).toMatchObject({ state: 'succeeded', attempts: [{ status: 204, error: null }] });
          expect(JSON.parse(received.at(-1)!).data.record.data).toEqual({ trusted: true });
        } else {
          expect(detail.state).toBe('pending');
          expect(detail.attempts[0].status).toBeNull();
          expect(detail.attempts[0].error).toMatch(/certificate|self.signed|CERT/i);
          expect(received.length).toBe(before);
        }
      } finally {
        await closeSender(t.deps);
        await t.close();
      }
    }
  });
});
