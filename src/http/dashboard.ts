import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import { PACKAGE_ROOT } from '../package-root.js';
import { OPEN } from './access.js';
import type { App } from './app-type.js';

/**
 * Serves the dashboard (web/, built by `npm run build` into web/dist) at `/`: the files under
 * /assets, its icon at /favicon.svg, and index.html at every page path of the app so its own
 * router takes over (a page opened from a bookmark or reloaded works). A browser that asks for a
 * page at any other address (outside /v1) gets index.html too, with status 404, and the app shows
 * its own "Page not found"; programs, and every path under /v1, get the API's JSON 404 like any
 * unknown route.
 */

const DIST = path.join(PACKAGE_ROOT, 'web', 'dist');

/** The app's page paths: the route table of web/src/App.tsx (test/dashboard-serving.test.ts keeps them equal). */
export const DASHBOARD_PAGES = [
  '/',
  '/setup',
  '/sign-in',
  '/invite/:token',
  '/workspaces/new',
  '/account',
  '/collections/:name',
  '/collections/:name/records',
  '/collections/:name/schemas',
  '/collections/:name/indexes',
  '/collections/:name/files',
  '/collections/:name/summary',
  '/trash',
  '/keys',
  '/service-accounts',
  '/webhooks',
  '/webhooks/:id',
  '/members',
  '/audit-log',
  '/backups',
];

/**
 * The page may load its own scripts, styles and images and call its own API, nothing else; no
 * other site may frame it (clickjacking); and the setup and invite tokens in its URLs never leave
 * in a Referer header.
 */
const PAGE_HEADERS = {
  'content-security-policy': [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; '),
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  // A new build changes the asset names index.html points to, so the page itself is never cached.
  'cache-control': 'no-cache',
};

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
};

/** Vite names its output files `name-hash.ext`, flat in assets/: anything else is not ours. */
const ASSET_NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/;

const notBuilt = () => new AppError('NOT_FOUND', 'The dashboard is not built on this server; run `npm run build` (npm start does it) and restart.');

export function registerDashboard(app: App): void {
  for (const page of DASHBOARD_PAGES) {
    app.get(page, {
      // The page is the same static HTML for everyone; what it shows depends on the API's answers.
      config: { operation: 'dashboard.page', access: OPEN },
      schema: { hide: true },
      handler: async (_request, reply) => sendPage(reply),
    });
  }

  // Matched only when no other route is: a path that is no page, no file and no API route.
  app.get('/*', {
    config: { operation: 'dashboard.not-found', access: OPEN },
    schema: { hide: true },
    handler: async (request, reply) => {
      if (request.url.startsWith('/v1/') || !asksForPage(request)) return reply.callNotFound();
      return sendPage(reply, 404);
    },
  });

  // The icon keeps its name (web/public/favicon.svg; browsers look for it by the page's link), so
  // it may be kept a day, not for good.
  app.get('/favicon.svg', {
    config: { operation: 'dashboard.asset', access: OPEN },
    schema: { hide: true },
    handler: async (_request, reply) => {
      const icon = await readFile(path.join(DIST, 'favicon.svg')).catch(() => null);
      if (icon === null) throw notBuilt();
      return reply.type('image/svg+xml').header('cache-control', 'public, max-age=86400').header('x-content-type-options', 'nosniff').send(icon);
    },
  });

  app.get('/assets/*', {
    config: { operation: 'dashboard.asset', access: OPEN },
    schema: { hide: true },
    handler: async (request, reply) => {
      const name = (request.params as { '*': string })['*'];
      const type = CONTENT_TYPES[path.extname(name)];
      if (!ASSET_NAME.test(name) || !type) throw new AppError('NOT_FOUND', `There is no dashboard file ${name}.`);
      const file = path.join(DIST, 'assets', name);
      const info = await stat(file).catch(() => null);
      if (!info?.isFile()) throw new AppError('NOT_FOUND', `There is no dashboard file ${name}.`);
      // Hashed names change with their content, so a browser may keep them for good.
      return reply
        .type(type)
        .header('content-length', info.size)
        .header('cache-control', 'public, max-age=31536000, immutable')
        .header('x-content-type-options', 'nosniff')
        .send(createReadStream(file));
    },
  });
}

/** A browser opening an address asks for HTML first; fetch() calls and programs do not. */
function asksForPage(request: FastifyRequest): boolean {
  return /\btext\/html\b/.test(request.headers.accept ?? '');
}

async function sendPage(reply: FastifyReply, status = 200): Promise<FastifyReply> {
  const html = await readFile(path.join(DIST, 'index.html'), 'utf8').catch(() => null);
  if (html === null) throw notBuilt();
  return reply.code(status).type('text/html; charset=utf-8').headers(PAGE_HEADERS).send(html);
}
