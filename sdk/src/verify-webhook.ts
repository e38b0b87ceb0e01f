import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Verifies a Plainbase webhook delivery (docs/design.md §7): the signature over
 * `x-baas-timestamp + "." + raw body` with HMAC-SHA-256 keyed by the whole `whsec_…` secret,
 * compared in constant time, and a timestamp no further than `toleranceSeconds` from now in
 * either direction (replay protection). Pass the body exactly as received, never re-serialised.
 */

export type WebhookErrorReason = 'missing-header' | 'invalid-timestamp' | 'timestamp-out-of-tolerance' | 'invalid-signature' | 'invalid-body';

export class WebhookVerificationError extends Error {
  readonly name = 'WebhookVerificationError';

  constructor(readonly reason: WebhookErrorReason, message: string) {
    super(message);
  }
}

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

type Headers = Record<string, string | string[] | undefined> | { get(name: string): string | null };

function header(headers: Headers, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const value = record[name] ?? Object.entries(record).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value[0] : value;
}

/** The `v1=` signature of a body, as Plainbase computes it. */
export function signWebhook(secret: string, timestamp: string, rawBody: string | Uint8Array): string {
  const hmac = createHmac('sha256', Buffer.from(secret, 'utf8'));
  hmac.update(`${timestamp}.`);
  hmac.update(typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody);
  return `v1=${hmac.digest('hex')}`;
}

/** Returns the parsed event when the delivery is genuine and fresh; throws WebhookVerificationError otherwise. */
export function verifyWebhook<T = Record<string, unknown>>(
  rawBody: string | Uint8Array,
  headers: Headers,
  secret: string,
  options: VerifyOptions = {},
): PlainbaseEvent<T> {
  const timestamp = header(headers, 'x-baas-timestamp');
  const signature = header(headers, 'x-baas-signature');
  if (!timestamp || !signature) throw new WebhookVerificationError('missing-header', 'The x-baas-timestamp or x-baas-signature header is missing.');
  if (!/^\d{1,12}$/.test(timestamp)) throw new WebhookVerificationError('invalid-timestamp', 'x-baas-timestamp is not Unix seconds.');

  const tolerance = options.toleranceSeconds ?? 300;
  const now = options.now === undefined ? Date.now() : Number(options.now);
  if (Math.abs(now / 1000 - Number(timestamp)) > tolerance) {
    throw new WebhookVerificationError('timestamp-out-of-tolerance', `x-baas-timestamp is more than ${tolerance} s from now.`);
  }

  const expected = Buffer.from(signWebhook(secret, timestamp, rawBody), 'utf8');
  // Several signatures may be sent during a change of scheme; any valid one is enough.
  const valid = signature.split(/[ ,]+/).some((candidate) => {
    const given = Buffer.from(candidate.trim(), 'utf8');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!valid) throw new WebhookVerificationError('invalid-signature', 'The signature does not match this body and secret.');

  try {
    return JSON.parse(typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8')) as PlainbaseEvent<T>;
  } catch {
    throw new WebhookVerificationError('invalid-body', 'The body is not JSON.');
  }
}
