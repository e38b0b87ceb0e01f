import type { FastifyInstance, onResponseHookHandler } from 'fastify';
import { collectDefaultMetrics, Registry, type Metric, type MetricValue } from 'prom-client';

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

/** Upper bounds of the latency histogram, in seconds. */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

/** The requests of one route (method and pattern) that got one status. */
interface Tally {
  count: number;
  seconds: number;
  /** Requests per bucket (not cumulative); the last one is above every bound. */
  perBucket: Float64Array;
}

/** The requests of one route, by status; built when the route is added. */
class RouteTallies {
  readonly byStatus = new Map<number, Tally>();

  constructor(readonly method: string, readonly route: string) {}

  record(status: number, seconds: number): void {
    let tally = this.byStatus.get(status);
    if (!tally) {
      tally = { count: 0, seconds: 0, perBucket: new Float64Array(BUCKETS.length + 1) };
      this.byStatus.set(status, tally);
    }
    tally.count += 1;
    tally.seconds += seconds;
    let bucket = 0;
    while (bucket < BUCKETS.length && seconds > BUCKETS[bucket]!) bucket++;
    tally.perBucket[bucket]! += 1;
  }
}

/**
 * Prometheus metrics of one app: requests and their latency by route and status, plus process
 * figures. Returns the registry that GET /metrics renders.
 *
 * Each route counts into tallies of its own, reached from a hook added to that route when it is
 * declared, so recording a request allocates nothing and hashes no labels; prom-client's labelled
 * metrics would build and hash a label object per request. The tallies become Prometheus series
 * only when /metrics is read. Requests that match no route are counted as route "unmatched".
 * The label is the route pattern, never the raw URL: ids in paths would make a series per
 * record, and tokens in paths (invite links) must not reach a metrics store.
 */
export function instrument(app: FastifyInstance): Registry {
  const routes: RouteTallies[] = [];
  const tallies = (method: string, route: string) => {
    const tally = new RouteTallies(method, route);
    routes.push(tally);
    return tally;
  };
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      const own = tallies(method, route.url);
      const count: onResponseHookHandler = (_request, reply, done) => {
        own.record(reply.statusCode, reply.elapsedTime / 1000);
        done();
      };
      route.onResponse = [...[route.onResponse ?? []].flat(), count];
    }
  });
  const unmatched = new Map<string, RouteTallies>();
  app.addHook('onResponse', (request, reply, done) => {
    if (request.is404) {
      let own = unmatched.get(request.method);
      if (!own) unmatched.set(request.method, (own = tallies(request.method, 'unmatched')));
      own.record(reply.statusCode, reply.elapsedTime / 1000);
    }
    done();
  });

  const registry = new Registry();
  registry.registerMetric(series('plainbase_http_requests_total', 'HTTP requests answered', 'counter', () => requestValues(routes)));
  registry.registerMetric(series('plainbase_http_request_duration_seconds', 'Time from request received to response sent', 'histogram', () => latencyValues(routes)));
  return Registry.merge([processRegistry(), registry]);
}

/** A metric in the shape a prom-client Registry renders, its values read from the tallies when asked. */
function series(name: string, help: string, type: 'counter' | 'histogram', values: () => MetricValue<string>[]): Metric {
  const get = async () => ({ name, help, type, values: values(), aggregator: 'sum' });
  return { name, help, type, get } as unknown as Metric;
}

function labelsOf(route: RouteTallies, status: number) {
  return { method: route.method, route: route.route, status: String(status) };
}

function requestValues(routes: RouteTallies[]): MetricValue<string>[] {
  const values: MetricValue<string>[] = [];
  for (const route of routes) for (const [status, tally] of route.byStatus) values.push({ labels: labelsOf(route, status), value: tally.count });
  return values;
}

function latencyValues(routes: RouteTallies[]): MetricValue<string>[] {
  const name = 'plainbase_http_request_duration_seconds';
  const values: (MetricValue<string> & { metricName: string })[] = [];
  for (const route of routes) {
    for (const [status, tally] of route.byStatus) {
      const labels = labelsOf(route, status);
      let below = 0;
      BUCKETS.forEach((bound, i) => {
        below += tally.perBucket[i]!;
        values.push({ metricName: `${name}_bucket`, labels: { le: bound, ...labels }, value: below });
      });
      values.push(
        { metricName: `${name}_bucket`, labels: { le: '+Inf', ...labels }, value: tally.count },
        { metricName: `${name}_sum`, labels, value: tally.seconds },
        { metricName: `${name}_count`, labels, value: tally.count },
      );
    }
  }
  return values;
}
