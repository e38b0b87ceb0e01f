import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startServer, stopServer, type ServerProcess } from './support/server-process.js';

/**
 * The README's five-minute walkthrough, run as written: its shell blocks are read from README.md
 * and run by bash against a real server process, so the README cannot drift from what works.
 * Only two things are changed: the fixed ports (8080 for the service, 4000 for the receiver) are
 * swapped for free ones, since other servers may be listening here, and $HOME is a scratch folder.
 * The first block (`… npm start`) is not run: its settings start the server process instead
 * (npm start also builds the dashboard, which the walkthrough does not use).
 *
 * SQLite only: it is the README's engine (what `npm start` uses with nothing set); the commands
 * themselves are the same on PostgreSQL.
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SECTION = '## Five minutes: from `npm start` to a verified webhook';

function walkthroughBlocks(): string[] {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf(SECTION);
  if (start < 0) throw new Error(`README.md has no section "${SECTION}"`);
  const end = readme.indexOf('\n## ', start + SECTION.length);
  const section = readme.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);
}

describe('the README walkthrough', () => {
  const blocks = walkthroughBlocks();
  let scratch: string;
  let server: ServerProcess | undefined;
  let result: { code: number | null; stdout: string; stderr: string };
  let receiverPort: number;
  /** When the builds the walkthrough runs were made, before it and after it. */
  let builtAt: { before: number[]; after: number[] };
  const builds = () => ['dist/cli.js', 'web/dist/index.html'].map((file) => statSync(path.join(ROOT, file)).mtimeMs);

  beforeAll(async () => {
    scratch = mkdtempSync(path.join(os.tmpdir(), 'plainbase-readme-'));
    const startBlock = blocks[0]!.trim();
    const settings = /^((?:PLAINBASE_[A-Z_]+=\S+ )*)npm start$/.exec(startBlock);
    if (!settings) throw new Error(`the walkthrough's first block should be "[PLAINBASE_…=… ]npm start", not: ${startBlock}`);
    const env = Object.fromEntries(settings[1]!.trim().split(/\s+/).filter(Boolean).map((pair) => pair.split('=') as [string, string]));
    const dataDir = path.join(scratch, 'data');
    server = await startServer({ ...env, PLAINBASE_DATA_DIR: dataDir });
    const port = new URL(server.base).port;
    receiverPort = await freePort();

    const script = blocks.slice(1).join('\n').replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`).replaceAll('4000', String(receiverPort));
    const home = path.join(scratch, 'home');
    const before = builds();
    result = await new Promise((resolve, reject) => {
      const bash = spawn('bash', ['-euo', 'pipefail', '-c', script], {
        cwd: ROOT,
        env: {
          ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('PLAINBASE_'))),
          // The CLI commands of the walkthrough use the server's database.
          PLAINBASE_DATA_DIR: dataDir,
          HOME: home,
          // Everything the walkthrough installs comes from this clone: proven by allowing no network.
          npm_config_offline: 'true',
          npm_config_update_notifier: 'false',
        },
      });
      let stdout = '';
      let stderr = '';
      bash.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
      bash.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
      const timer = setTimeout(() => bash.kill('SIGKILL'), 150_000);
      bash.on('error', reject);
      bash.on('exit', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
    });
    builtAt = { before, after: builds() };
  }, 240_000);

  afterAll(async () => {
    await stopServer(server);
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('runs to the end, every block as written', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(6);
    expect(result.code, `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`).toBe(0);
  });

  // `npx plainbase` in a checkout installs the checkout into npx's cache, whose `prepare` builds
  // dist/ and web/dist/ again: under the server the walkthrough runs, and under every other test.
  it('builds nothing: the CLI runs from the build that is there', () => {
    expect(builtAt.after).toEqual(builtAt.before);
  });

  it('makes a key with the CLI, a public collection and a record with curl', () => {
    expect(result.stderr).toMatch(/created key key_\w+ "walkthrough" of ada@example\.com in workspace ws_\w+/);
    expect(result.stdout).toMatch(/"name":"posts","public":true/);
    expect(result.stdout).toMatch(/"data":\{"title":"Hello, world"\}/);
  });

  it('reads the public collection anonymously, with the workspace header', () => {
    const page = result.stdout.split('\n').find((line) => line.startsWith('{"data":['));
    expect(JSON.parse(page!)).toMatchObject({ data: [{ data: { title: 'Hello, world' } }], nextCursor: null });
  });

  it('receives the record.created webhook and verifies it with the SDK', () => {
    expect(result.stdout).toContain(`listening on http://localhost:${receiverPort}/hooks`);
    expect(result.stdout).toMatch(/^verified record\.created: \{"record":\{"id":"rec_\w+","data":\{"title":"Second post"\}\}\}$/m);
    expect(result.stdout).not.toContain('refused:');
  });

  it('tells an anonymous reader who leaves out the header what to send, as step 4 says', async () => {
    const reply = await fetch(`${server!.base}/v1/collections/posts/records`);
    const body = await reply.json();
    expect([reply.status, body.error.code]).toEqual([400, 'INVALID_REQUEST']);
    expect(body.error.message).toMatch(/x-baas-workspace/);
  });
});
