/**
 * The webhook receiver of bench/webhooks.ts, run as its own process (child_process.fork, so
 * it never shares an event loop with the bench or with the server under test). A bare node:http
 * server on loopback that answers 200 at once to every call and counts:
 *
 * - every call, and the distinct `x-baas-delivery` ids (the first arrival of each event);
 * - per first arrival, the latency: arrival time minus the event's `createdAt` (both on this
 *   machine's clock; createdAt has millisecond precision);
 * - the first and the last first-arrival, which time a drain;
 * - calls per `x-baas-webhook-id`.
 *
 * Messages from the parent (IPC): `{type: 'reset', since?}` clears the counts, and from then on
 * ignores (answers, but does not count) events created before `since` (epoch ms), so that a
 * warm-up's late arrivals stay out of the figures; `{type: 'stats', id}`
 * answers `{type: 'stats', id, stats}`; `{type: 'waitFor', id, count}` answers
 * `{type: 'reached', id, stats}` once `count` distinct deliveries have arrived. At start the
 * process sends `{type: 'ready', port}`. It exits when the parent goes away.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

export interface ReceiverStats {
  calls: number;
  distinct: number;
  /** Epoch ms (with fractions) of the first and the last first-arrival; null before any. */
  firstArrival: number | null;
  lastArrival: number | null;
  /** Event-to-first-attempt latency in ms. */
  latency: { count: number; p50: number; p90: number; p99: number; max: number };
  callsPerWebhook: Record<string, number>;
}

export type ToReceiver = { type: 'reset'; since?: number } | { type: 'stats'; id: number } | { type: 'waitFor'; id: number; count: number };
export type FromReceiver =
  | { type: 'ready'; port: number }
  | { type: 'stats'; id: number; stats: ReceiverStats }
  | { type: 'reached'; id: number; stats: ReceiverStats };

const now = () => performance.timeOrigin + performance.now();

let calls = 0;
let seen = new Set<string>();
let latencies: number[] = [];
let firstArrival: number | null = null;
let lastArrival: number | null = null;
let perWebhook = new Map<string, number>();
let waiters: { id: number; count: number }[] = [];
let since = Number.NEGATIVE_INFINITY;

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

function stats(): ReceiverStats {
  const sorted = Float64Array.from(latencies).sort();
  return {
    calls,
    distinct: seen.size,
    firstArrival,
    lastArrival,
    latency: {
      count: sorted.length,
      p50: percentile(sorted, 50),
      p90: percentile(sorted, 90),
      p99: percentile(sorted, 99),
      max: sorted.length ? sorted[sorted.length - 1]! : Number.NaN,
    },
    callsPerWebhook: Object.fromEntries(perWebhook),
  };
}

function send(message: FromReceiver): void {
  // The bench may have gone (interrupted): then there is no one to answer.
  if (process.connected) process.send?.(message);
}

function answerWaiters(): void {
  if (waiters.length === 0) return;
  const reached = waiters.filter((waiter) => seen.size >= waiter.count);
  if (reached.length === 0) return;
  waiters = waiters.filter((waiter) => seen.size < waiter.count);
  const current = stats();
  for (const waiter of reached) send({ type: 'reached', id: waiter.id, stats: current });
}

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const arrival = now();
    response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    let createdAt = Number.NaN;
    try {
      createdAt = Date.parse((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { createdAt: string }).createdAt);
    } catch {
      // Not an event message (the bench only sends event messages): counted, not timed.
    }
    if (createdAt < since) return;
    calls++;
    const webhookId = String(request.headers['x-baas-webhook-id'] ?? '');
    perWebhook.set(webhookId, (perWebhook.get(webhookId) ?? 0) + 1);
    const delivery = String(request.headers['x-baas-delivery'] ?? '');
    // One delivery per (event, webhook): with several webhooks the same event id arrives once for each.
    const key = `${webhookId}/${delivery}`;
    if (seen.has(key)) return;
    seen.add(key);
    firstArrival ??= arrival;
    lastArrival = arrival;
    if (Number.isFinite(createdAt)) latencies.push(arrival - createdAt);
    answerWaiters();
  });
});
// Clients keep their connections between calls, as the worker's pool does.
server.keepAliveTimeout = 30_000;
server.on('clientError', (_error, socket) => socket.destroy());

process.on('message', (message: ToReceiver) => {
  if (message.type === 'reset') {
    calls = 0;
    seen = new Set();
    latencies = [];
    firstArrival = null;
    lastArrival = null;
    perWebhook = new Map();
    since = message.since ?? Number.NEGATIVE_INFINITY;
  } else if (message.type === 'stats') {
    send({ type: 'stats', id: message.id, stats: stats() });
  } else if (message.type === 'waitFor') {
    waiters.push({ id: message.id, count: message.count });
    answerWaiters();
  }
});
// The bench went away (finished, crashed or interrupted): so does the receiver.
process.on('disconnect', () => process.exit(0));

server.listen(0, '127.0.0.1', () => send({ type: 'ready', port: (server.address() as AddressInfo).port }));
