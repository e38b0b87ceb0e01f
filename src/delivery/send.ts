import { performance } from 'node:perf_hooks';
import type { LookupAddress } from 'node:dns';
import type { Readable } from 'node:stream';
import { Agent, request } from 'undici';
import { ATTEMPT_TIMEOUT_MS } from './schedule.js';
import { loggedBody, loggedHeaders } from './logged-response.js';
import { signPayload } from './sign.js';
import { BlockedUrl, checkUrlShape, isAddressLiteral, resolveCheckedAddresses, type GuardOptions } from './url-guard.js';
import { toStorableText } from '../storable-text.js';

export const RESPONSE_BODY_LIMIT = 16 * 1024;

export interface Outgoing {
  url: string;
  secret: string;
  webhookId: string;
  eventId: string;
  eventType: string;
  /** The exact bytes sent and signed. */
  body: string;
  /** Unix seconds; a fresh one for every attempt. */
  timestamp: number;
}

export interface AttemptResult {
  ok: boolean;
  status: number | null;
  durationMs: number;
  responseHeaders: Record<string, string>;
  responseBody: string;
  error: string | null;
}

/** What a blocked destination reports: one reason, whatever the rule, so it is no port-scan oracle. */
export const BLOCKED_DESTINATION = 'destination not allowed';

/**
 * Sends webhook calls. The guard runs before every call, and the socket connects only to an
 * address the guard checked (its `lookup` hands undici the checked address), so a name that
 * changes to a private address between check and connect (DNS rebinding) cannot slip through.
 * Redirects are never followed: a 3xx is a failed attempt.
 */
export class WebhookSender {
  private readonly agent: Agent;
  /** The network-free checks of each URL (see checkedShape). */
  private readonly shapes = new Map<string, CheckedShape | BlockedUrl>();

  constructor(private readonly guard: GuardOptions, options: { ca?: string[] } = {}) {
    this.agent = new Agent({
      connect: {
        ...(options.ca ? { ca: options.ca } : {}),
        lookup: checkedLookup(guard),
      },
      headersTimeout: ATTEMPT_TIMEOUT_MS,
      bodyTimeout: ATTEMPT_TIMEOUT_MS,
    });
  }

  async send(outgoing: Outgoing): Promise<AttemptResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const failed = (error: string, status: number | null = null): AttemptResult => ({
      ok: false, status, durationMs: elapsed(), responseHeaders: {}, responseBody: '', error,
    });
    try {
      const shape = this.checkedShape(outgoing.url);
      if (shape instanceof BlockedUrl) return failed(BLOCKED_DESTINATION);
      // A name is resolved and its addresses checked at every attempt. (A literal address, which
      // never reaches `lookup`, was checked with the shape.)
      if (!shape.literal) await resolveCheckedAddresses(shape.url, this.guard);
    } catch (error) {
      if (error instanceof BlockedUrl) return failed(BLOCKED_DESTINATION);
      throw error;
    }
    const timestamp = String(outgoing.timestamp);
    try {
      const response = await request(outgoing.url, {
        method: 'POST',
        dispatcher: this.agent,
        headers: {
          'content-type': 'application/json',
          // The log keeps the body as it arrives, never decompressed (logged-response.ts).
          'accept-encoding': 'identity',
          'user-agent': 'Plainbase-Webhooks/1',
          'x-baas-event': outgoing.eventType,
          'x-baas-delivery': outgoing.eventId,
          'x-baas-timestamp': timestamp,
          'x-baas-signature': signPayload(outgoing.secret, timestamp, outgoing.body),
          'x-baas-webhook-id': outgoing.webhookId,
        },
        body: outgoing.body,
        signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
      });
      // The status decides the attempt; the body only fills the log, so no more of it is read.
      const { bytes, cut } = await readFirstBytes(response.body, RESPONSE_BODY_LIMIT);
      const headers = loggedHeaders(response.headers);
      const responseBody = loggedBody(bytes, { cut, contentType: headers['content-type'], contentEncoding: headers['content-encoding'] });
      const ok = response.statusCode >= 200 && response.statusCode < 300;
      return { ok, status: response.statusCode, durationMs: elapsed(), responseHeaders: headers, responseBody, error: ok ? null : `HTTP ${response.statusCode}` };
    } catch (error) {
      const cause = (error as { cause?: unknown }).cause;
      if (cause instanceof BlockedUrl || error instanceof BlockedUrl) return failed(BLOCKED_DESTINATION);
      const name = (error as Error).name;
      if (name === 'TimeoutError' || name === 'AbortError' || (error as { code?: string }).code === 'UND_ERR_HEADERS_TIMEOUT') {
        return failed(`no response within ${ATTEMPT_TIMEOUT_MS / 1000} s`);
      }
      return failed(describeNetworkError(error));
    }
  }

  /**
   * The URL checks that need no network (checkUrlShape), remembered per URL: they depend on
   * nothing else, and a worker sends to few URLs many times.
   */
  private checkedShape(raw: string): CheckedShape | BlockedUrl {
    let shape = this.shapes.get(raw);
    if (!shape) {
      try {
        const url = checkUrlShape(raw, this.guard);
        shape = { url, literal: isAddressLiteral(url) };
      } catch (error) {
        if (!(error instanceof BlockedUrl)) throw error;
        shape = error;
      }
      if (this.shapes.size >= SHAPES_REMEMBERED) this.shapes.clear();
      this.shapes.set(raw, shape);
    }
    return shape;
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for the socket that resolves the name and hands over only addresses the guard
 * checked. Node calls it in two shapes: with `all` (happy eyeballs, the default in Node 20, tries
 * each address in turn) it wants every address as a list; without, one address and its family.
 */
export function checkedLookup(guard: GuardOptions) {
  return (hostname: string, options: { all?: boolean; family?: number | string }, callback: LookupCallback): void => {
    const url = new URL(`https://${hostname.includes(':') ? `[${hostname}]` : hostname}/`);
    resolveCheckedAddresses(url, guard).then(
      (checked) => {
        const wanted = familyOf(options.family);
        const addresses = wanted ? checked.filter((entry) => entry.family === wanted) : checked;
        if (addresses.length === 0) {
          callback(Object.assign(new Error(`${hostname} has no IPv${wanted} address`), { code: 'ENOTFOUND' }), '', 0);
        } else if (options.all) {
          callback(null, addresses.map(({ address, family }) => ({ address, family })));
        } else {
          callback(null, addresses[0]!.address, addresses[0]!.family);
        }
      },
      (error: Error) => callback(error, '', 0),
    );
  };
}

function familyOf(family: number | string | undefined): 4 | 6 | null {
  if (family === 4 || family === 'IPv4') return 4;
  if (family === 6 || family === 'IPv6') return 6;
  return null;
}

interface CheckedShape {
  url: URL;
  /** The host is an address, which checkUrlShape has checked. */
  literal: boolean;
}
const SHAPES_REMEMBERED = 10_000;

/**
 * Reads the body up to `limit` bytes, then destroys it, which closes the connection: the rest,
 * perhaps endless, is never read (draining it would cost the worker the bandwidth and the time
 * of the whole body). A body that breaks off (the connection reset, the attempt's time up) gives
 * what arrived: the status has come already, and it decides the attempt.
 */
export function readFirstBytes(body: Readable, limit: number): Promise<{ bytes: Buffer; cut: boolean }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (cut: boolean) => {
      if (done) return;
      done = true;
      body.removeAllListeners('data');
      resolve({ bytes: Buffer.concat(chunks, size), cut });
    };
    body.on('data', (chunk: Buffer) => {
      const kept = chunk.subarray(0, limit - size);
      chunks.push(kept);
      size += kept.length;
      if (size >= limit) {
        body.destroy();
        finish(true);
      }
    });
    body.once('end', () => finish(false));
    // Kept on after the finish: a stream that errs with no listener would crash the process.
    body.on('error', () => finish(true));
  });
}

function describeNetworkError(error: unknown): string {
  const code = (error as { code?: string }).code ?? ((error as { cause?: { code?: string } }).cause?.code);
  const message = error instanceof Error ? error.message : String(error);
  return toStorableText(code ? `${code}: ${message}` : message);
}
