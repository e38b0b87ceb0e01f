import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestS3, type TestS3 } from './support/s3-server.js';
import { call, createDatabase, signInOwner, startServer, stopServer, type ServerProcess } from './support/server-process.js';

/**
 * The release as `npm ci && npm start` makes and runs it: bin/plainbase.js runs the build in dist/
 * (made for this run by test/support/build-server.ts), and a process loads the heavy modules only
 * for what its configuration uses (docs/operations.md, "Start-up and memory"). Each process here
 * is a real `node bin/plainbase.js serve` whose every `import` is written to a file
 * (test/support/record-loads.mjs). One process and one caller each: what is checked is what one
 * process loads, which no second workspace or client changes.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RECORDER = pathToFileURL(path.join(ROOT, 'test', 'support', 'record-loads.mjs')).href;
const postgresUrl = inject('postgresUrl');
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'plainbase-release-'));
const servers: ServerProcess[] = [];

afterAll(async () => {
  await Promise.all(servers.map((server) => stopServer(server)));
  fs.rmSync(scratch, { recursive: true, force: true });
});

/** Starts the built service with `env`; `loaded()` lists the modules it has imported so far. */
async function startRecorded(env: Record<string, string>): Promise<{ server: ServerProcess; loaded: () => string[] }> {
  const dir = fs.mkdtempSync(path.join(scratch, 'run-'));
  const file = path.join(dir, 'loads.txt');
  const server = await startServer({ PLAINBASE_DATA_DIR: path.join(dir, 'data'), NODE_OPTIONS: `--import "${RECORDER}"`, RECORD_LOADS_TO: file, ...env });
  servers.push(server);
  return { server, loaded: () => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) };
}

const AWS_SDK = /\/node_modules\/@aws-sdk\//;
const PG = /\/node_modules\/pg\//;
const SQLITE = /\/node_modules\/better-sqlite3\//;
const UNDICI = /\/node_modules\/undici\//;
const WORKER = /\/dist\/worker\/delivery-worker\.js$/;
/** Packages of many small modules that scripts/build-server.mjs puts into the bundle. */
const BUNDLED = /\/node_modules\/(typebox|kysely|zod|csv-parse)\//;
const matching = (urls: string[], pattern: RegExp) => urls.filter((url) => pattern.test(url));

describe('the built release', () => {
  it('bin/plainbase.js runs dist/, and without a build beside it says how to make one, in one line', () => {
    expect(fs.existsSync(path.join(ROOT, 'dist', 'cli.js'))).toBe(true);
    const version = spawnSync(process.execPath, [path.join(ROOT, 'bin', 'plainbase.js'), '--version'], { encoding: 'utf8' });
    expect(version.stdout).toMatch(/^plainbase \d+\.\d+\.\d+\n$/);

    const alone = path.join(scratch, 'unbuilt');
    fs.mkdirSync(path.join(alone, 'bin'), { recursive: true });
    fs.copyFileSync(path.join(ROOT, 'bin', 'plainbase.js'), path.join(alone, 'bin', 'plainbase.js'));
    fs.writeFileSync(path.join(alone, 'package.json'), '{"type":"module"}\n');
    const unbuilt = spawnSync(process.execPath, [path.join(alone, 'bin', 'plainbase.js'), '--help'], { encoding: 'utf8' });
    expect(unbuilt.status).toBe(1);
    expect(unbuilt.stdout).toBe('');
    expect(unbuilt.stderr).toBe('plainbase: the program is not built; run npm run build (npm ci builds it)\n');
  });

  it('on SQLite without S3, start loads neither the AWS SDK, the PostgreSQL driver nor the webhook HTTP client', async () => {
    const { loaded } = await startRecorded({ PLAINBASE_WORKER: 'on' });
    const urls = loaded();
    // The recorder sees dynamic imports of packages: the driver and the worker are both loaded that way.
    expect(matching(urls, SQLITE).length).toBeGreaterThan(0);
    expect(matching(urls, WORKER)).toHaveLength(1);
    expect(matching(urls, AWS_SDK)).toEqual([]);
    expect(matching(urls, PG)).toEqual([]);
    expect(matching(urls, UNDICI)).toEqual([]);
    // Loaded from the bundle, not as their hundreds of files; and the build is a few dozen files.
    expect(matching(urls, BUNDLED)).toEqual([]);
    expect(matching(urls, /\/dist\//).length).toBeLessThan(50);
  });

  it('with PLAINBASE_WORKER=off, none of the delivery worker is loaded', async () => {
    const { loaded } = await startRecorded({ PLAINBASE_WORKER: 'off' });
    expect(matching(loaded(), SQLITE).length).toBeGreaterThan(0);
    expect(matching(loaded(), WORKER)).toEqual([]);
  });

  describe('with files in S3', () => {
    let s3: TestS3;
    beforeAll(async () => {
      s3 = await startTestS3();
    });
    afterAll(async () => {
      await s3?.close();
    });

    it('loads the AWS SDK at the first file, not at start, and the file lands in the bucket', async () => {
      const { settings } = s3;
      const { server, loaded } = await startRecorded({
        PLAINBASE_S3_BUCKET: settings.bucket,
        PLAINBASE_S3_ENDPOINT: settings.endpoint!,
        PLAINBASE_S3_ACCESS_KEY_ID: settings.accessKeyId!,
        PLAINBASE_S3_SECRET_ACCESS_KEY: settings.secretAccessKey!,
        PLAINBASE_S3_FORCE_PATH_STYLE: '1',
      });
      expect(matching(loaded(), AWS_SDK)).toEqual([]);

      const session = await signInOwner(server.base);
      expect((await call(server.base, 'POST', '/v1/collections', session, { name: 'scans' })).status).toBe(201);
      const upload = await fetch(`${server.base}/v1/collections/scans/files?name=a.txt`, {
        method: 'POST',
        headers: { ...session, 'content-type': 'text/plain' },
        body: 'hello from the release test',
      });
      expect(upload.status).toBe(201);
      const file = (await upload.json()) as { id: string };
      expect(matching(loaded(), AWS_SDK).length).toBeGreaterThan(0);
      expect((await s3.keys()).some((key) => key.endsWith(file.id))).toBe(true);
      const download = await fetch(`${server.base}/v1/collections/scans/files/${file.id}/content`, { headers: session });
      expect(await download.text()).toBe('hello from the release test');
    });
  });

  it.runIf(postgresUrl)('on PostgreSQL, start loads the PostgreSQL driver and not SQLite\'s', async () => {
    const database = await createDatabase(postgresUrl!, 'plainbase_release');
    try {
      const { server, loaded } = await startRecorded({ PLAINBASE_DATABASE_URL: database.url, PLAINBASE_WORKER: 'on' });
      expect(matching(loaded(), PG).length).toBeGreaterThan(0);
      expect(matching(loaded(), SQLITE)).toEqual([]);
      await stopServer(server);
    } finally {
      await database.drop();
    }
  });
});
