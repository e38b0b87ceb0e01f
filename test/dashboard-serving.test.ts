import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_PAGES } from '../src/http/dashboard.js';
import { startTestApp, type TestApp } from './support/harness.js';

/**
 * The service serves the built dashboard (web/dist, built by the test run's global setup): its
 * pages with security headers, its files, and nothing else: every other path keeps the API's
 * JSON 404. The database plays no part here, so SQLite alone.
 */
describe('serving the dashboard', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite');
  });
  afterAll(async () => {
    await t?.close();
  });

  const get = (url: string) => t.app.inject({ method: 'GET', url });

  it('serves a page at every path of the app’s route table, and only there', () => {
    const appSource = fs.readFileSync(new URL('../web/src/App.tsx', import.meta.url), 'utf8');
    const routeTable = appSource.slice(appSource.indexOf('export const routes'), appSource.indexOf('];', appSource.indexOf('export const routes')));
    const appPaths = [...routeTable.matchAll(/path: '([^']+)'/g)].map((match) => match[1]);
    expect(appPaths.length).toBeGreaterThan(10);
    expect([...appPaths].sort()).toEqual([...DASHBOARD_PAGES].sort());
  });

  it('answers each page with index.html, a strict Content-Security-Policy, no framing and no referrer', async () => {
    for (const page of DASHBOARD_PAGES) {
      const url = page.replace(/:(\w+)/g, 'some-$1');
      const reply = await get(`${url}?x=1`);
      expect(reply.statusCode, url).toBe(200);
      expect(reply.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(reply.body).toContain('<div id="root"></div>');
      const csp = String(reply.headers['content-security-policy']);
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(reply.headers['x-frame-options']).toBe('DENY');
      expect(reply.headers['referrer-policy']).toBe('no-referrer');
      expect(reply.headers['cache-control']).toBe('no-cache');
    }
  });

  it('serves the built files the page names, cached for good, and nothing outside them', async () => {
    const page = await get('/');
    const assets = [...page.body.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((match) => match[1]!);
    expect(assets.some((asset) => asset.endsWith('.js'))).toBe(true);
    expect(assets.some((asset) => asset.endsWith('.css'))).toBe(true);
    for (const asset of assets) {
      const reply = await get(asset);
      expect(reply.statusCode, asset).toBe(200);
      expect(reply.headers['content-type']).toMatch(asset.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
      expect(reply.headers['cache-control']).toContain('immutable');
      expect(Number(reply.headers['content-length'])).toBe(reply.rawPayload.length);
    }
    for (const url of ['/assets/nope.js', '/assets/..%2F..%2Fpackage.json', '/assets/..%2Findex.html', '/assets/.hidden.js', '/assets/x.txt']) {
      const reply = await get(url);
      expect(reply.statusCode, url).toBe(404);
      expect(reply.json().error.code).toBe('NOT_FOUND');
    }
  });

  it('answers a browser asking for an unknown address with the page and 404, so the app says it is not found', async () => {
    const asPage = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
    for (const url of ['/nowhere', '/collections', '/members/extra', '/index.html']) {
      const reply = await t.app.inject({ method: 'GET', url, headers: asPage });
      expect(reply.statusCode, url).toBe(404);
      expect(reply.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(reply.body).toContain('<div id="root"></div>');
      expect(String(reply.headers['content-security-policy'])).toContain("default-src 'self'");
    }
    // The API's paths stay the API's, whoever asks.
    const api = await t.app.inject({ method: 'GET', url: '/v1/nope', headers: asPage });
    expect(api.statusCode).toBe(404);
    expect(api.json().error.code).toBe('NOT_FOUND');
  });

  it('serves the icon the page names, so no browser meets a 404 for it', async () => {
    const page = await get('/');
    expect(page.body).toContain('<link rel="icon" type="image/svg+xml" href="/favicon.svg" />');
    const reply = await get('/favicon.svg');
    expect(reply.statusCode).toBe(200);
    expect(reply.headers['content-type']).toBe('image/svg+xml');
    expect(reply.body).toContain('<svg');
  });

  it('leaves every other path to the API’s JSON 404', async () => {
    for (const url of ['/v1/nope', '/v2/members', '/nowhere', '/collections', '/members/extra', '/invite', '/index.html']) {
      const reply = await get(url);
      expect(reply.statusCode, url).toBe(404);
      expect(reply.json().error.code, url).toBe('NOT_FOUND');
    }
    // And the service's own pages stay theirs.
    expect((await get('/healthz')).json()).toEqual({ status: 'ok' });
    expect((await get('/docs')).statusCode).toBe(200);
  });
});
