import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { SDK } from './build-sdk.js';

/**
 * A web site on another origin than the service's: a tiny HTTP server on `localhost:<port>` (the
 * service listens on 127.0.0.1, so the browser sees two origins). It serves its HTML pages (`/`
 * unless told otherwise) and the built SDK under `/sdk/` (sdk/dist), as a site that hosts the SDK
 * itself would.
 */
export interface OtherOrigin {
  /** `http://localhost:<port>`, what the browser sends as Origin. */
  origin: string;
  close(): Promise<void>;
}

const TYPES: Record<string, string> = { '.js': 'text/javascript', '.map': 'application/json', '.html': 'text/html; charset=utf-8' };

const BLANK = '<!doctype html><meta charset="utf-8"><title>another site</title><p>another site</p>';

/** A page's HTML, or what writes it at each request (a page whose content the test changes). */
export type PageHtml = string | (() => string);

/** `pages` maps paths (`/`, `/thanks.html`) to HTML; `origin => pages` when a page must name its own origin. */
export async function startOtherOrigin(pages: Record<string, PageHtml> | ((origin: string) => Record<string, PageHtml>) = { '/': BLANK }): Promise<OtherOrigin> {
  const dist = path.join(SDK, 'dist');
  let html: Record<string, PageHtml> = {};
  const server: Server = createServer((request, response) => {
    const pathname = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (Object.hasOwn(html, pathname)) {
      const page = html[pathname]!;
      response.writeHead(200, { 'content-type': TYPES['.html']! }).end(typeof page === 'function' ? page() : page);
      return;
    }
    const file = path.normalize(path.join(dist, decodeURIComponent(pathname.slice('/sdk/'.length))));
    if (!pathname.startsWith('/sdk/') || !file.startsWith(dist + path.sep)) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    readFile(file).then(
      (body) => response.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' }).end(body),
      () => response.writeHead(404, { 'content-type': 'text/plain' }).end('not found'),
    );
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, 'localhost', resolve));
  const origin = `http://localhost:${(server.address() as AddressInfo).port}`;
  html = typeof pages === 'function' ? pages(origin) : pages;
  return {
    origin,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
