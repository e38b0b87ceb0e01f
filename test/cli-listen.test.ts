import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { verifyWebhook } from '../sdk/src/verify-webhook.js';
import { closeSender } from '../src/delivery/guard-options.js';
import { DeliveryWorker } from '../src/worker/delivery-worker.js';
import { signedInOwner, type Client } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/**
 * `plainbase listen` as a developer runs it: the real CLI in a child process, a server listening
 * on loopback, and a receiver on `localhost` that checks every call with the SDK's verifier.
 */
const BIN = fileURLToPath(new URL('../bin/plainbase.js', import.meta.url));
const SECRET = 'whsec_listen-test-secret-0123456789abcdef';

class Cli {
  stdout = '';
  stderr = '';
  readonly exited: Promise<number | null>;
  constructor(readonly child: ChildProcessWithoutNullStreams) {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (this.stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }
  /** The CLI with `args`; `stdin` is written to its standard input, `key` goes in PLAINBASE_KEY, `secret` in PLAINBASE_LISTEN_SECRET. */
  static run(args: string[], options: { stdin?: string; key?: string; secret?: string } = {}): Cli {
    const child = spawn(process.execPath, [BIN, 'listen', ...args], { env: { ...process.env, PLAINBASE_KEY: options.key ?? '', PLAINBASE_LISTEN_SECRET: options.secret ?? '' } });
    child.stdin.end(options.stdin ?? '');
    return new Cli(child);
  }
  async until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms\nstdout: ${this.stdout}\nstderr: ${this.stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  async stop(): Promise<number | null> {
    this.child.kill('SIGINT');
    return this.exited;
  }
}

describeEachEngine('plainbase listen', (engine) => {
  let t: TestApp;
  let owner: Client;
  let worker: DeliveryWorker;
  let base: string;
  let receiver: Server;
  let hook: string;
  const verified: { type: string; data: any }[] = [];
  const refused: IncomingHttpHeaders[] = [];
  beforeEach(async () => {
    t = await startTestApp(engine);
    owner = await signedInOwner(t);
    await owner.post('/v1/collections', { name: 'leads' });
    worker = new DeliveryWorker(t.deps, { idleMs: 200 });
    worker.start();
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    verified.length = 0;
    refused.length = 0;
    receiver = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', async () => {
        try {
          const event = await verifyWebhook(Buffer.concat(chunks), request.headers as Record<string, string>, SECRET);
          verified.push(event as { type: string; data: any });
          response.writeHead(204).end();
        } catch {
          refused.push(request.headers);
          response.writeHead(400).end();
        }
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    hook = `http://localhost:${(receiver.address() as AddressInfo).port}/hook`;
  });
  afterEach(async () => {
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
    await worker.stop();
    await closeSender(t.deps);
    await t.close();
  });

  const keyWith = async (scopes: string[]) => (await owner.post('/v1/keys', { name: 'listen', scopes })).body.secret as string;

  it('forwards each event as a signed delivery and prints a line per event with the answer', async () => {
    let exit: number | null;
    const key = await keyWith(['records:read']);
    // The key from standard input and the signing secret from the environment: never on the
    // command line, where every local user sees it.
    const cli = Cli.run(['--url', base, '--key-stdin', '--forward-to', hook, '--types', 'record.created'], { stdin: `${key}\n`, secret: SECRET });
    try {
      await cli.until(() => cli.stderr.includes('Connected'), 'the CLI to connect');
      for (const n of [1, 2, 3]) await owner.post('/v1/collections/leads/records', { data: { n } });
      await cli.until(() => verified.length === 3, 'three verified deliveries');
      expect(verified.map((event) => event.data.record.data.n)).toEqual([1, 2, 3]);
      expect(refused).toEqual([]);
      await cli.until(() => cli.stdout.trim().split('\n').length === 3, 'three printed lines');
      for (const line of cli.stdout.trim().split('\n')) expect(line).toMatch(/ record\.created {2}evt_[0-9a-z]{26} {2}→ 204 \(\d+ ms\)$/);
      expect(cli.stderr).toContain(`Signed with ${SECRET}`);
      expect(cli.stderr).not.toContain('warning');
    } finally {
      // Stopped whatever happened, but checked after: an assertion here would replace the error
      // that says what went wrong (the CLI's output comes with a failed wait).
      exit = await cli.stop();
    }
    expect(exit).toBe(0);
  });

  it('prints events as JSON lines from a given event on, and refuses a key the server refuses', async () => {
    for (const n of [1, 2, 3]) await owner.post('/v1/collections/leads/records', { data: { n } });
    // The running worker puts them in the feed (a drain beside its own rounds could return first).
    let feed: any[] = [];
    for (const deadline = Date.now() + 10_000; feed.length < 3 && Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 50))) {
      feed = (await owner.get('/v1/events?types=record.created')).body.data.reverse();
    }
    const key = await keyWith(['records:read']);
    const cli = Cli.run(['--url', base, '--print', '--types', 'record.created', '--since', feed[0].id], { key });
    try {
      await cli.until(() => cli.stdout.trim().split('\n').length === 2, 'two printed events');
      expect(cli.stdout.trim().split('\n')).toEqual(feed.slice(1).map((event: unknown) => JSON.stringify(event)));
    } finally {
      await cli.stop();
    }

    // --key and --secret still work, saying that each was visible to every local user.
    const bad = Cli.run(['--url', base, '--key', 'pb_live_nope', '--secret', SECRET, '--print']);
    expect(await bad.exited).toBe(1);
    expect(bad.stderr).toMatch(/plainbase: the server refused the stream: 401 INVALID_API_KEY/);
    expect(bad.stderr).toMatch(/^plainbase: warning: --key puts the key on the command line, where every user of this machine can read it \(ps\); use --key-stdin or PLAINBASE_KEY instead\n/);
    expect(bad.stderr).toContain('plainbase: warning: --secret puts the secret on the command line, where every user of this machine can read it (ps); use PLAINBASE_LISTEN_SECRET instead\n');
  });
});
