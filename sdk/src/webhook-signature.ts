import { PlainbaseError } from './errors.js';

/**
 * Verifies a Plainbase webhook delivery with WebCrypto, so it runs wherever the SDK does (Node.js,
 * Deno, Bun, edge runtimes, browsers): the signature `v1=` + hex HMAC-SHA-256, keyed by the UTF-8
 * bytes of the whole `whsec_…` secret, over `x-baas-timestamp + "." + raw body`, compared in
 * constant time; and a timestamp no further than `toleranceSeconds` from now in either direction
 * (replay protection). Pass the body exactly as received, never re-serialised JSON.
 */

export type WebhookErrorReason = 'missing-header' | 'invalid-timestamp' | 'timestamp-out-of-tolerance' | 'invalid-signature' | 'invalid-body';

/** A delivery that is not genuine or not fresh. A PlainbaseError (code WEBHOOK_VERIFICATION_FAILED, status 400: what to answer the sender). */
export class WebhookVerificationError extends PlainbaseError {
  override readonly name: string = 'WebhookVerificationError';

  constructor(
    readonly reason: WebhookErrorReason,
    message: string,
  ) {
    super({ code: 'WEBHOOK_VERIFICATION_FAILED', message, status: 400, details: { reason } });
  }
}

/** An event message, the body of a delivery. */
export interface PlainbaseEvent<T = Record<string, unknown>> {
  id: string;
  type: string;
  createdAt: string;
  workspaceId: string;
  collectionId: string | null;
  data: T;
}

export interface VerifyOptions {
  /** Largest accepted difference between x-baas-timestamp and now, in seconds. Default 300. */
  toleranceSeconds?: number;
  /** The current time, for tests. */
  now?: Date | number;
}

/** A Fetch Headers object, or a plain object of header values (Node.js's request.headers). */
export type WebhookHeaders = Record<string, string | string[] | undefined> | { get(name: string): string | null };

export type RawBody = string | Uint8Array | ArrayBuffer;

const encoder = new TextEncoder();

/**
 * The verification itself, given where to get WebCrypto from (the runtime decides: see
 * verify-webhook.ts and verify-webhook-browser.ts, the two public faces of it).
 */
export async function verifyDelivery<T>(
  getCrypto: () => Promise<Crypto>,
  rawBody: RawBody,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyOptions,
): Promise<PlainbaseEvent<T>> {
  const timestamp = header(headers, 'x-baas-timestamp');
  const signature = header(headers, 'x-baas-signature');
  if (!timestamp || !signature) throw new WebhookVerificationError('missing-header', 'The x-baas-timestamp or x-baas-signature header is missing.');
  if (!/^\d{1,12}$/.test(timestamp)) throw new WebhookVerificationError('invalid-timestamp', 'x-baas-timestamp is not Unix seconds.');

  const tolerance = options.toleranceSeconds ?? 300;
  const now = options.now === undefined ? Date.now() : Number(options.now);
  if (Math.abs(now / 1000 - Number(timestamp)) > tolerance) {
    throw new WebhookVerificationError('timestamp-out-of-tolerance', `x-baas-timestamp is more than ${tolerance} s from now.`);
  }

  const body = bytesOf(rawBody);
  const expected = await hmac(await getCrypto(), secret, timestamp, body);
  // Several signatures may be sent during a change of scheme; any valid one is enough.
  const valid = signature.split(/[ ,]+/).some((candidate) => {
    const given = /^v1=([0-9a-f]{64})$/.exec(candidate.trim());
    return given !== null && equalInConstantTime(hexToBytes(given[1]!), expected);
  });
  if (!valid) throw new WebhookVerificationError('invalid-signature', 'The signature does not match this body and secret.');

  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body)) as PlainbaseEvent<T>;
  } catch {
    throw new WebhookVerificationError('invalid-body', 'The body is not JSON in UTF-8.');
  }
}

/** The `v1=` signature of a body, given where to get WebCrypto from. */
export async function signDelivery(getCrypto: () => Promise<Crypto>, secret: string, timestamp: string, rawBody: RawBody): Promise<string> {
  const mac = await hmac(await getCrypto(), secret, timestamp, bytesOf(rawBody));
  return `v1=${Array.from(mac, (byte) => byte.toString(16).padStart(2, '0')).join('')}`;
}

async function hmac({ subtle }: Crypto, secret: string, timestamp: string, body: Uint8Array): Promise<Uint8Array> {
  const key = await subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const prefix = encoder.encode(`${timestamp}.`);
  const message = new Uint8Array(prefix.byteLength + body.byteLength);
  message.set(prefix, 0);
  message.set(body, prefix.byteLength);
  return new Uint8Array(await subtle.sign('HMAC', key, message));
}

/** Compares every byte whatever the first difference, so the time taken tells nothing about the expected value. */
function equalInConstantTime(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  let difference = 0;
  for (let i = 0; i < a.byteLength; i++) difference |= a[i]! ^ b[i]!;
  return difference === 0;
}

function hexToBytes(hex: string): Uint8Array {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

function bytesOf(body: RawBody): Uint8Array {
  if (typeof body === 'string') return encoder.encode(body);
  return body instanceof Uint8Array ? body : new Uint8Array(body);
}

/** A header's first value; plain objects are searched by lower-case name among their own keys only. */
function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.hasOwn(record, name) ? name : Object.keys(record).find((candidate) => candidate.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
}
