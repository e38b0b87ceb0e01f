import autocannon, { type Options, type RequestSpec, type Result } from 'autocannon';
import { loadAverage, readCpuSeconds } from './memory.js';

export interface LoadSpec {
  /** The server's origin, e.g. http://127.0.0.1:4321; several servers share the connections round-robin. */
  url: string | string[];
  connections: number;
  seconds: number;
  /** A run of this length goes first and is thrown away (JIT, caches, connection set-up). */
  warmupSeconds: number;
  method: 'GET' | 'POST' | 'PATCH';
  headers: Record<string, string>;
  /** A fixed path, or one chosen per request (e.g. a random record id). */
  path: string | (() => string);
  /** One body for every request, or a new one for each (an update must change something). */
  body?: string | (() => string);
  /** The server's processes: their CPU time during the measured run is reported per request. */
  serverPid: number | number[];
}

export interface LoadResult {
  connections: number;
  /** 2xx responses per second over the measured run. */
  reqPerSec: number;
  /** Latency of 2xx responses in milliseconds, to the microsecond (not autocannon's whole-ms histogram). */
  p50: number;
  p99: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  seconds: number;
  statusCodes: Record<string, number>;
  /** Server CPU time (user + system) per 2xx response, in milliseconds. */
  serverCpuMsPerRequest: number;
  /** Share of one core the server used during the run (1 = one core busy all the time). */
  serverCpuShare: number;
  /** 1-minute load average when the run ended: above ~2 on 2 cores, other work competed. */
  loadAverage: number;
}

function run(options: Options, onResponse?: (status: number, ms: number) => void): Promise<Result> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(options, (error, result) => (error ? reject(error) : resolve(result)));
    if (onResponse) {
      instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => onResponse(status, ms));
    }
  });
}

/** The CPU seconds the server processes have used so far, together. */
function serverCpuSeconds(pids: number | number[]): number {
  return [pids].flat().reduce((sum, pid) => sum + (readCpuSeconds(pid) ?? Number.NaN), 0);
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/**
 * Loads a server with autocannon from this process (never the server's): a warm-up run that is
 * discarded, then the measured run. Latencies are recorded per response with sub-millisecond
 * precision; only 2xx answers count towards req/s and the percentiles, the rest are reported.
 */
export async function measure(spec: LoadSpec): Promise<LoadResult> {
  const chooseBody = spec.body;
  const request: RequestSpec = { method: spec.method, headers: spec.headers, body: typeof chooseBody === 'function' ? undefined : chooseBody };
  const choosePath = spec.path;
  if (typeof choosePath !== 'function') request.path = choosePath;
  if (typeof choosePath === 'function' || typeof chooseBody === 'function') {
    request.setupRequest = (raw) => {
      if (typeof choosePath === 'function') raw.path = choosePath();
      if (typeof chooseBody === 'function') raw.body = chooseBody();
      return raw;
    };
  }
  const options: Options = { url: spec.url, connections: spec.connections, timeout: 30, requests: [request] };

  if (spec.warmupSeconds > 0) await run({ ...options, duration: spec.warmupSeconds });

  let latencies = new Float64Array(1 << 16);
  let ok = 0;
  const cpuBefore = serverCpuSeconds(spec.serverPid);
  const result = await run({ ...options, duration: spec.seconds }, (status, ms) => {
    if (status < 200 || status > 299) return;
    if (ok === latencies.length) {
      const bigger = new Float64Array(latencies.length * 2);
      bigger.set(latencies);
      latencies = bigger;
    }
    latencies[ok++] = ms;
  });
  const cpuSeconds = serverCpuSeconds(spec.serverPid) - cpuBefore;
  const sorted = latencies.subarray(0, ok).sort();
  const statusCodes: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = Number(count);
  return {
    connections: spec.connections,
    reqPerSec: ok / result.duration,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    ok,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    seconds: result.duration,
    statusCodes,
    serverCpuMsPerRequest: (cpuSeconds * 1000) / ok,
    serverCpuShare: cpuSeconds / result.duration,
    loadAverage: loadAverage(),
  };
}
