import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, ensureWritableDir, loadConfig, prepareDirectories, redactDatabaseUrl, unknownVariables, VARIABLES } from '../src/config.js';

/** The error loadConfig throws for this environment (and fails the test when it throws none). */
function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'plainbase-config-'));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

describe('loadConfig', () => {
  it('starts with nothing set: 127.0.0.1:8080, SQLite under ./data, production', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      dataDir: path.resolve('data'),
      database: { engine: 'sqlite', file: path.resolve('data', 'plainbase.db') },
      publicUrl: 'http://127.0.0.1:8080',
      env: 'production',
      api: true,
      worker: true,
      rateLimitPerKey: 100,
      rateLimitPerIp: 20,
      keyPepper: null,
      owner: null,
      logLevel: 'info',
      webhookAllowPrivate: false,
      webhookCaFile: null,
    });
  });

  it('reads each setting it documents', () => {
    const config = loadConfig({
      PLAINBASE_PORT: '9000',
      PLAINBASE_HOST: '0.0.0.0',
      PLAINBASE_DATA_DIR: '/srv/plainbase',
      PLAINBASE_DATABASE_URL: 'postgres://app:pw@db.internal:5432/plainbase',
      PLAINBASE_PUBLIC_URL: 'https://data.example.com/',
      PLAINBASE_ENV: 'development',
      PLAINBASE_WORKER: 'off',
      PLAINBASE_RATE_LIMIT_PER_KEY: '0',
      PLAINBASE_SESSION_TTL_HOURS: '2',
      PLAINBASE_KEY_PEPPER: 'p'.repeat(32),
      PLAINBASE_OWNER_EMAIL: 'owner@example.com',
      PLAINBASE_OWNER_PASSWORD: 'long enough password',
      PLAINBASE_WEBHOOK_ALLOW_PRIVATE: '1',
    });
    expect(config).toMatchObject({
      port: 9000,
      host: '0.0.0.0',
      dataDir: '/srv/plainbase',
      database: { engine: 'postgres', url: 'postgres://app:pw@db.internal:5432/plainbase' },
      publicUrl: 'https://data.example.com',
      env: 'development',
      worker: false,
      rateLimitPerKey: 0,
      sessionTtlSeconds: 7200,
      keyPepper: 'p'.repeat(32),
      owner: { email: 'owner@example.com', password: 'long enough password' },
      webhookAllowPrivate: true,
    });
  });

  it('reads PLAINBASE_TRUST_PROXY in the forms Fastify takes, and refuses anything else naming the variable', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ PLAINBASE_TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ PLAINBASE_TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ PLAINBASE_TRUST_PROXY: '2' }).trustProxy).toEqual({ hops: 2 });
    expect(loadConfig({ PLAINBASE_TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,::1,fd00::/8,loopback' }).trustProxy).toEqual({
      addresses: ['10.0.0.0/8', '127.0.0.1', '::1', 'fd00::/8', 'loopback'],
    });
    for (const bad of ['0', '101', 'yes', '1.2.3', '10.0.0.0/33', '127.0.0.1,,10.0.0.1', 'proxy.example.com', '10.0.0.1/8/8']) {
      const error = configError({ PLAINBASE_TRUST_PROXY: bad });
      expect(error.variable, bad).toBe('PLAINBASE_TRUST_PROXY');
      expect(error.message).toMatch(/must be true, a number of proxies/);
    }
  });

  it('treats an empty value as unset', () => {
    expect(loadConfig({ PLAINBASE_PORT: '', PLAINBASE_DATABASE_URL: '' })).toMatchObject({ port: 8080, database: { engine: 'sqlite' } });
  });

  it('takes sqlite: URLs for a database file outside the data folder', () => {
    expect(loadConfig({ PLAINBASE_DATABASE_URL: 'sqlite:/var/lib/pb.db' }).database).toEqual({ engine: 'sqlite', file: '/var/lib/pb.db' });
    expect(loadConfig({ PLAINBASE_DATABASE_URL: 'postgres://pooler:6432/x', PLAINBASE_DATABASE_DIRECT_URL: 'postgres://db:5432/x' }).database).toEqual({ engine: 'postgres', url: 'postgres://pooler:6432/x', directUrl: 'postgres://db:5432/x' });
    expect(loadConfig({ PLAINBASE_DATABASE_URL: 'postgres://db:5432/x', PLAINBASE_DATABASE_DIRECT_URL: '' }).database).toEqual({ engine: 'postgres', url: 'postgres://db:5432/x' });
    expect(loadConfig({ PLAINBASE_DATABASE_URL: 'sqlite:relative.db' }).database).toEqual({ engine: 'sqlite', file: path.resolve('relative.db') });
  });

  it.each([
    ['PLAINBASE_PORT', { PLAINBASE_PORT: 'abc' }, /whole number.*"abc"/],
    ['PLAINBASE_PORT', { PLAINBASE_PORT: '0' }, /at least 1/],
    ['PLAINBASE_PORT', { PLAINBASE_PORT: '70000' }, /at most 65535/],
    ['PLAINBASE_PORT', { PLAINBASE_PORT: '80.5' }, /whole number/],
    ['PLAINBASE_HOST', { PLAINBASE_HOST: 'http://0.0.0.0' }, /not a URL/],
    ['PLAINBASE_ENV', { PLAINBASE_ENV: 'staging' }, /production or development.*"staging"/],
    ['PLAINBASE_DATABASE_URL', { PLAINBASE_DATABASE_URL: 'mysql://root@db/plainbase' }, /postgres:\/\/ or sqlite:.*"mysql:"/],
    ['PLAINBASE_DATABASE_URL', { PLAINBASE_DATABASE_URL: 'db.example.com' }, /postgres:\/\/ or sqlite:/],
    ['PLAINBASE_DATABASE_URL', { PLAINBASE_DATABASE_URL: 'sqlite:' }, /names no file/],
    ['PLAINBASE_DATABASE_DIRECT_URL', { PLAINBASE_DATABASE_DIRECT_URL: 'postgres://db.internal/x' }, /PostgreSQL only/],
    ['PLAINBASE_DATABASE_DIRECT_URL', { PLAINBASE_DATABASE_URL: 'postgres://pooler/x', PLAINBASE_DATABASE_DIRECT_URL: 'mysql://db/x' }, /must start with postgres:\/\//],
    ['PLAINBASE_PUBLIC_URL', { PLAINBASE_PUBLIC_URL: 'data.example.com' }, /http:\/\/ or https:\/\//],
    ['PLAINBASE_PUBLIC_URL', { PLAINBASE_PUBLIC_URL: 'ftp://data.example.com' }, /http:\/\/ or https:\/\//],
    ['PLAINBASE_PUBLIC_URL', { PLAINBASE_PUBLIC_URL: 'https://data.example.com/?x=1' }, /http:\/\/ or https:\/\//],
    ['PLAINBASE_API', { PLAINBASE_API: 'yes' }, /on or off/],
    ['PLAINBASE_API', { PLAINBASE_API: 'off', PLAINBASE_WORKER: 'off' }, /nothing to do/],
    ['PLAINBASE_WORKER', { PLAINBASE_WORKER: 'disabled' }, /on or off/],
    ['PLAINBASE_BODY_LIMIT', { PLAINBASE_BODY_LIMIT: '10' }, /at least 1024/],
    ['PLAINBASE_IMPORT_LIMIT', { PLAINBASE_IMPORT_LIMIT: '1MB' }, /whole number/],
    ['PLAINBASE_RATE_LIMIT_PER_KEY', { PLAINBASE_RATE_LIMIT_PER_KEY: '-1' }, /whole number/],
    ['PLAINBASE_RATE_LIMIT_PER_IP', { PLAINBASE_RATE_LIMIT_PER_IP: 'lots' }, /whole number/],
    ['PLAINBASE_SESSION_TTL_HOURS', { PLAINBASE_SESSION_TTL_HOURS: '0' }, /at least 1/],
    ['PLAINBASE_SIGN_IN_MAX_FAILURES', { PLAINBASE_SIGN_IN_MAX_FAILURES: 'x' }, /whole number/],
    ['PLAINBASE_SIGN_IN_LOCK_SECONDS', { PLAINBASE_SIGN_IN_LOCK_SECONDS: '0' }, /at least 1/],
    ['PLAINBASE_SIGN_IN_SLOWDOWN_MS', { PLAINBASE_SIGN_IN_SLOWDOWN_MS: '5000' }, /at most 2000/],
    ['PLAINBASE_KEY_PEPPER', { PLAINBASE_KEY_PEPPER: 'short' }, /at least 32 characters/],
    ['PLAINBASE_OWNER_EMAIL', { PLAINBASE_OWNER_EMAIL: 'not-an-email', PLAINBASE_OWNER_PASSWORD: 'long enough password' }, /email address/],
    ['PLAINBASE_OWNER_PASSWORD', { PLAINBASE_OWNER_EMAIL: 'owner@example.com' }, /together/],
    ['PLAINBASE_OWNER_EMAIL', { PLAINBASE_OWNER_PASSWORD: 'long enough password' }, /together/],
    ['PLAINBASE_OWNER_PASSWORD', { PLAINBASE_OWNER_EMAIL: 'owner@example.com', PLAINBASE_OWNER_PASSWORD: 'short' }, /at least 10/],
    ['PLAINBASE_LOG_LEVEL', { PLAINBASE_LOG_LEVEL: 'loud' }, /one of fatal, error/],
    ['PLAINBASE_WEBHOOK_ALLOW_PRIVATE', { PLAINBASE_WEBHOOK_ALLOW_PRIVATE: 'maybe' }, /1 or 0/],
    ['PLAINBASE_WEBHOOK_CA_FILE', { PLAINBASE_WEBHOOK_CA_FILE: '/nonexistent/ca.pem' }, /cannot read/],
    // A test may make hashes cheaper, down to a floor, and never dearer than the service's own.
    ['PLAINBASE_TEST_PASSWORD_HASH_COST', { PLAINBASE_TEST_PASSWORD_HASH_COST: '9' }, /at least 10/],
    ['PLAINBASE_TEST_PASSWORD_HASH_COST', { PLAINBASE_TEST_PASSWORD_HASH_COST: '16' }, /at most 15/],
  ])('names %s for %j', (variable, env, detail) => {
    const error = configError(env);
    expect(error.variable).toBe(variable);
    expect(error.message.startsWith(`${variable}: `)).toBe(true);
    expect(error.message).toMatch(detail);
    expect(error.message).not.toContain('\n');
  });

  it('never echoes a secret value in its error line', () => {
    expect(configError({ PLAINBASE_OWNER_EMAIL: 'o@example.com', PLAINBASE_OWNER_PASSWORD: 'hunter2' }).message).not.toContain('hunter2');
    expect(configError({ PLAINBASE_KEY_PEPPER: 'tooshortpepper' }).message).not.toContain('tooshortpepper');
    expect(configError({ PLAINBASE_DATABASE_URL: 'mysql://root:s3cretpw@db/x' }).message).not.toContain('s3cretpw');
    expect(configError({ PLAINBASE_DATABASE_URL: 'postgres://pooler/x', PLAINBASE_DATABASE_DIRECT_URL: 'postgres://app:s3cretpw@[db/x' }).message).not.toContain('s3cretpw');
    const redis = configError({ PLAINBASE_REDIS_URL: 'http://:r3dispw@cache:6379' });
    expect(redis.message).toMatch(/PLAINBASE_REDIS_URL: must be a redis:\/\/ or rediss:\/\/ URL/);
    expect(redis.message).not.toContain('r3dispw');
    expect(redactDatabaseUrl('postgres://app:s3cretpw@db:5432/x?password=other')).toBe('postgres://app:***@db:5432/x?password=***');
  });

  it('checks the webhook CA file at start', () => {
    const notPem = path.join(scratch, 'ca.txt');
    fs.writeFileSync(notPem, 'hello');
    expect(configError({ PLAINBASE_WEBHOOK_CA_FILE: notPem }).message).toMatch(/no PEM certificate/);
    const pem = path.join(scratch, 'ca.pem');
    fs.writeFileSync(pem, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
    expect(loadConfig({ PLAINBASE_WEBHOOK_CA_FILE: pem }).webhookCaFile).toBe(pem);
  });

  it('points out PLAINBASE_ variables it does not know (typos), but not the CLI and test ones', () => {
    expect(unknownVariables({ PLAINBASE_PROT: '1', PLAINBASE_PORT: '1', PLAINBASE_TEST_DATABASE_URL: 'x', PLAINBASE_NEW_OWNER_PASSWORD: 'x', HOME: '/' })).toEqual([
      'PLAINBASE_PROT',
    ]);
  });
});

describe('data folder', () => {
  it('is created with its parents', () => {
    const dir = path.join(scratch, 'a', 'b', 'data');
    prepareDirectories(loadConfig({ PLAINBASE_DATA_DIR: dir }));
    expect(fs.statSync(dir).isDirectory()).toBe(true);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('names PLAINBASE_DATA_DIR when it is a file or lies under one', () => {
    const file = path.join(scratch, 'a-file');
    fs.writeFileSync(file, '');
    for (const dir of [file, path.join(file, 'data')]) {
      const error = (() => {
        try {
          prepareDirectories(loadConfig({ PLAINBASE_DATA_DIR: dir }));
        } catch (caught) {
          return caught as ConfigError;
        }
        throw new Error(`accepted ${dir}`);
      })();
      expect(error).toBeInstanceOf(ConfigError);
      expect(error.variable).toBe('PLAINBASE_DATA_DIR');
      expect(error.message).toMatch(/is a file, not a folder/);
    }
  });

  it.runIf(fs.existsSync('/proc/self'))('names the variable for a folder that cannot be made (under /proc), without hanging', () => {
    expect(() => ensureWritableDir('/proc/plainbase-data', 'PLAINBASE_DATA_DIR')).toThrow(/^PLAINBASE_DATA_DIR: cannot create the folder/);
  });

  it('names PLAINBASE_DATABASE_URL when the SQLite file lies outside the data folder', () => {
    const file = path.join(scratch, 'a-file-too');
    fs.writeFileSync(file, '');
    expect(() => prepareDirectories(loadConfig({ PLAINBASE_DATABASE_URL: `sqlite:${file}/db/plainbase.db` }))).toThrow(/^PLAINBASE_DATABASE_URL: /);
  });

  it('needs no folder on PostgreSQL', () => {
    const dir = path.join(scratch, 'never-made');
    prepareDirectories(loadConfig({ PLAINBASE_DATA_DIR: dir, PLAINBASE_DATABASE_URL: 'postgres://localhost/x' }));
    expect(fs.existsSync(dir)).toBe(false);
  });
});

describe('README', () => {
  it('has a row for every variable, with its default', () => {
    const readme = fs.readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    for (const [name, spec] of Object.entries(VARIABLES)) {
      const row = readme.split('\n').find((line) => line.startsWith(`| \`PLAINBASE_${name}\``));
      expect(row, `README row for PLAINBASE_${name}`).toBeDefined();
      expect(row).toContain(spec.default.startsWith('(') ? spec.default : `\`${spec.default}\``);
    }
  });
});
