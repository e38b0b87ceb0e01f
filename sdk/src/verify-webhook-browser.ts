import { signDelivery, verifyDelivery, type PlainbaseEvent, type RawBody, type VerifyOptions, type WebhookHeaders } from './webhook-signature.js';

export { WebhookVerificationError, type PlainbaseEvent, type RawBody, type VerifyOptions, type WebhookErrorReason, type WebhookHeaders } from './webhook-signature.js';

/**
 * The webhook verifier of the browser build: WebCrypto is a global in every browser, so nothing
 * here knows of Node.js (verify-webhook.ts is the same with a fallback for Node.js 18).
 */

/** Resolves to the parsed event when the delivery is genuine and fresh; rejects with WebhookVerificationError otherwise. */
export async function verifyWebhook<T = Record<string, unknown>>(rawBody: RawBody, headers: WebhookHeaders, secret: string, options: VerifyOptions = {}): Promise<PlainbaseEvent<T>> {
  return verifyDelivery<T>(webCrypto, rawBody, headers, secret, options);
}

/** The `v1=` signature of a body, as Plainbase computes it: for a test sender or a receiver's own tests. */
export async function signWebhook(secret: string, timestamp: string, rawBody: RawBody): Promise<string> {
  return signDelivery(webCrypto, secret, timestamp, rawBody);
}

async function webCrypto(): Promise<Crypto> {
  if (!globalThis.crypto?.subtle) throw new Error('verifyWebhook needs WebCrypto (crypto.subtle), which browsers give only to secure contexts (https:// or localhost).');
  return globalThis.crypto;
}
