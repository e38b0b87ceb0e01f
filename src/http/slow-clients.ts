import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServerOptions } from 'node:http';
import type { Config } from '../config.js';

/**
 * Bounds on how slowly a client may send a request (docs/operations.md, "Slow clients").
 *
 * The head (request line and headers) has a total time, Node's `headersTimeout`, checked every
 * `connectionsCheckingInterval` (30 s by default, which would let a bound of 20 s run to 50 s).
 *
 * A body has no total time, because an import may rightly stream for many minutes. It has a
 * slowest rate instead, judged per window: each window of `bodyTimeoutMs` must bring at least
 * `bodyMinBytesPerSecond` × its length in bytes, unless the body ends within it. A plain idle
 * timeout would not do: a byte every few seconds keeps a connection "active" forever. Node's own
 * `requestTimeout` (a total time for head and body) stays off, as Fastify leaves it, and so does
 * the socket idle timeout: neither must cut an event stream or a long import's answer.
 */
export function slowClientServerOptions(config: Config): { http: ServerOptions } {
  return {
    http: {
      headersTimeout: config.headersTimeoutMs,
      connectionsCheckingInterval: Math.min(30_000, Math.max(50, Math.floor(config.headersTimeoutMs / 4))),
    },
  };
}

/**
 * An onRequest hook that watches the body of each request that has one. It counts the bytes the
 * connection has read (`socket.bytesRead`), never listening to the body itself (a 'data' listener
 * would start it flowing before its parser is there). A window in which the server holds body
 * bytes it has not read yet is the server's slowness, not the client's (an import waiting on the
 * database pauses the socket): it is not judged.
 */
export function watchBodyProgress(config: Config) {
  const windowMs = config.bodyTimeoutMs;
  // At least one byte: with a rate of 0, only a body that stops for a whole window is cut off.
  const perWindow = Math.max(1, Math.floor((config.bodyMinBytesPerSecond * windowMs) / 1000));
  return (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    if (expectsBody(request)) watch(request, reply, windowMs, perWindow, config.bodyMinBytesPerSecond);
    done();
  };
}

function expectsBody(request: FastifyRequest): boolean {
  const { headers, complete } = request.raw;
  if (complete) return false;
  return headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');
}

function watch(request: FastifyRequest, reply: FastifyReply, windowMs: number, perWindow: number, minBytesPerSecond: number): void {
  const { raw } = request;
  const socket = raw.socket;
  let readBefore = socket.bytesRead;
  const check = () => {
    if (raw.complete || socket.destroyed) return;
    const read = socket.bytesRead;
    if (read - readBefore < perWindow && raw.readableLength === 0) return cutOff(request, reply, windowMs, minBytesPerSecond);
    readBefore = read;
    timer.refresh();
  };
  const timer = setTimeout(check, windowMs).unref();
  // A body left unread by an early answer (a 401 before the body) is still drained by Node after
  // it: its trickle is watched until it ends, or the connection is cut.
  reply.raw.once('close', () => {
    if (raw.complete) clearTimeout(timer);
  });
}

/**
 * Answers 408 in the error shape and closes the connection: the request cannot be answered
 * through Fastify, whose handler is still waiting for the body. Written to the socket the way
 * Node answers a head that is too slow, after which nothing more is read from it.
 */
function cutOff(request: FastifyRequest, reply: FastifyReply, windowMs: number, minBytesPerSecond: number): void {
  const socket = request.raw.socket;
  request.log.info({ reqId: request.id }, 'request body too slow; connection closed');
  if (reply.raw.headersSent) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify({
    error: {
      code: 'INVALID_REQUEST',
      message: `The request body arrived too slowly: at least ${minBytesPerSecond} bytes a second over each ${windowMs / 1000} s are needed.`,
      requestId: request.id,
      details: { minBytesPerSecond, windowSeconds: windowMs / 1000 },
    },
  });
  const head = [
    'HTTP/1.1 408 Request Timeout',
    'connection: close',
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    `x-request-id: ${request.id}`,
  ].join('\r\n');
  socket.end(`${head}\r\n\r\n${body}`, () => socket.destroy());
  // Nothing more is read: the trickle stops costing anything now.
  socket.pause();
}
