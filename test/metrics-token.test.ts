import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startTestApp, type TestApp } from './support/harness.js';

const TOKEN = 'metrics-token-0123456789abcdef';

async function metrics(t: TestApp, authorization?: string) {
  const response = await t.app.inject({ method: 'GET', url: '/metrics', headers: authorization === undefined ? {} : { authorization } });
  return { status: response.statusCode, body: response.body, requestId: response.headers['x-request-id'] };
}

describe('/metrics with PLAINBASE_METRICS_TOKEN set', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite', { metricsToken: TOKEN });
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers the token as a bearer credential', async () => {
    const reply = await metrics(t, `Bearer ${TOKEN}`);
    expect(reply.status).toBe(200);
    expect(reply.body).toContain('plainbase_http_requests_total');
  });

  it('refuses no token, a wrong one, a prefix, a longer one and an API key with 401 UNAUTHENTICATED, saying nothing of the token', async () => {
    for (const authorization of [undefined, 'Bearer ', `Bearer ${TOKEN.slice(0, -1)}`, `Bearer ${TOKEN}x`, `Basic ${TOKEN}`, TOKEN, 'Bearer pb_live_abc_def', `Bearer ${TOKEN.toUpperCase()}`]) {
      const reply = await metrics(t, authorization);
      expect(reply.status, String(authorization)).toBe(401);
      const { error } = JSON.parse(reply.body);
      expect(error).toMatchObject({ code: 'UNAUTHENTICATED', requestId: reply.requestId });
      expect(reply.body).not.toContain(TOKEN);
      expect(reply.body).not.toContain('plainbase_http');
    }
  });

  it('leaves the health checks open', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });
});

describe('/metrics without a token', () => {
  it('stays open, as before', async () => {
    const t = await startTestApp('sqlite');
    try {
      expect((await metrics(t)).status).toBe(200);
    } finally {
      await t.close();
    }
  });

  it('PLAINBASE_METRICS_TOKEN is checked at start: too short is a configuration error that does not echo it', () => {
    expect(loadConfig({ PLAINBASE_METRICS_TOKEN: TOKEN }).metricsToken).toBe(TOKEN);
    expect(loadConfig({}).metricsToken).toBeNull();
    expect(() => loadConfig({ PLAINBASE_METRICS_TOKEN: 'short' })).toThrow(/^PLAINBASE_METRICS_TOKEN: must be at least 16 characters$/);
  });
});
