import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

let processMetrics: Registry | undefined;

/**
 * Process figures (CPU, memory, event-loop lag, GC) are one set per process: collecting them
 * starts observers that never stop, so each app in a test run must not start its own.
 */
function processRegistry(): Registry {
  if (!processMetrics) {
    processMetrics = new Registry();
    collectDefaultMetrics({ register: processMetrics, prefix: 'plainbase_' });
  }
  return processMetrics;
}

/**
 * Prometheus metrics of one app: requests and their latency by route, plus process figures.
 * Returns the registry that GET /metrics renders.
 */
export function instrument(app: FastifyInstance): Registry {
  const registry = new Registry();
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({ name: 'plainbase_http_requests_total', help: 'HTTP requests answered', labelNames, registers: [registry] });
  const latency = new Histogram({
    name: 'plainbase_http_request_duration_seconds',
    help: 'Time from request received to response sent',
    labelNames,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  });
  // A callback hook: an async one would cost a promise per request for work that never waits.
  app.addHook('onResponse', (request, reply, done) => {
    // The route pattern, never the raw URL: ids in paths would make a label per record, and
    // tokens in paths (invite links) must not reach a metrics store.
    const labels = { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) };
    requests.inc(labels);
    latency.observe(labels, reply.elapsedTime / 1000);
    done();
  });
  return Registry.merge([processRegistry(), registry]);
}
