import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/harness.js';

/**
 * The served OpenAPI document passes Redocly's `recommended` ruleset: no error and no warning.
 * Redocly's CLI is the pinned devDependency (its Node API is not published at the same version),
 * run on the document as a client receives it. SQLite only: the document does not depend on the
 * engine (test/sdk-generated-types.test.ts compares both).
 */

const REDOCLY = path.join(path.dirname(createRequire(import.meta.url).resolve('@redocly/cli/package.json')), 'bin', 'cli.js');

interface Problem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  location: { pointer: string }[];
}

let t: TestApp;
let folder: string;
beforeAll(async () => {
  t = await startTestApp('sqlite');
  folder = fs.mkdtempSync(path.join(os.tmpdir(), 'plainbase-openapi-'));
});
afterAll(async () => {
  await t.close();
  fs.rmSync(folder, { recursive: true, force: true });
});

it('the served /v1/openapi.json passes Redocly\'s recommended ruleset without errors or warnings', async () => {
  const reply = await t.app.inject({ method: 'GET', url: '/v1/openapi.json' });
  expect(reply.statusCode).toBe(200);
  const file = path.join(folder, 'openapi.json');
  fs.writeFileSync(file, reply.body);

  // In an empty folder, so that no redocly.yaml nearby changes the rules; no telemetry, no update check.
  const { stdout } = await promisify(execFile)(process.execPath, [REDOCLY, 'lint', '--extends', 'recommended', '--format', 'json', '--max-problems', '1000', file], {
    cwd: folder,
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
    maxBuffer: 64 * 1024 * 1024,
  }).catch((error: { stdout?: string; stderr?: string }) => {
    // Redocly exits with 1 when it finds errors; its report is still on stdout.
    if (!error.stdout) throw new Error(`redocly lint did not run: ${error.stderr}`);
    return { stdout: error.stdout };
  });
  const report = JSON.parse(stdout) as { version: string; problems: Problem[] };
  expect(report.version).toBe('2.77.0');
  const listed = report.problems.map((problem) => `${problem.severity} ${problem.ruleId} at ${problem.location[0]?.pointer}: ${problem.message}`);
  expect(listed).toEqual([]);
});

it('every docs/ page the document points at is in the repository', async () => {
  const document = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).body;
  const pages = [...new Set(document.match(/docs\/[\w./-]*\w/g) ?? [])];
  expect(pages.length).toBeGreaterThan(0);
  const root = path.join(path.dirname(new URL(import.meta.url).pathname), '..');
  expect(pages.filter((page) => !fs.existsSync(path.join(root, page)))).toEqual([]);
});

it('every operation has an example of its request body and of each successful answer with a body', async () => {
  const document = JSON.parse((await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).body);
  type Media = { example?: unknown; examples?: unknown; schema?: { examples?: unknown[]; type?: string; format?: string } };
  const exemplified = (media: Media) =>
    media.example !== undefined || media.examples !== undefined || Array.isArray(media.schema?.examples) ||
    (media.schema?.type === 'string' && media.schema?.format === 'binary');
  const missing: string[] = [];
  for (const [url, methods] of Object.entries<Record<string, { requestBody?: { content: Record<string, Media> }; responses: Record<string, { content?: Record<string, Media> }> }>>(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      for (const [type, media] of Object.entries(operation.requestBody?.content ?? {})) {
        if (!exemplified(media)) missing.push(`${method.toUpperCase()} ${url} request ${type}`);
      }
      for (const [status, response] of Object.entries(operation.responses)) {
        if (!/^2\d\d$/.test(status)) continue;
        for (const [type, media] of Object.entries(response.content ?? {})) {
          if (!exemplified(media)) missing.push(`${method.toUpperCase()} ${url} ${status} ${type}`);
        }
      }
    }
  }
  expect(missing).toEqual([]);
});
