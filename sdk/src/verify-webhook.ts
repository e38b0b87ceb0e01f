import { signDelivery, verifyDelivery, type PlainbaseEvent, type RawBody, type VerifyOptions, type WebhookHeaders } from './webhook-signature.js';

export { WebhookVerificationError, type PlainbaseEvent, type RawBody, type VerifyOptions, type WebhookErrorReason, type WebhookHeaders } from './webhook-signature.js';

/**
 * The webhook verifier for every runtime but browsers (the package's `browser` condition picks
 * verify-webhook-browser.ts instead): it also finds WebCrypto where it is no global, as on Node.js 18.
 */

/** Resolves to the parsed event when the delivery is genuine and fresh; rejects with WebhookVerificationError otherwise. */
export async function verifyWebhook<T = Record<string, unknown>>(rawBody: RawBody, headers: WebhookHeaders, secret: string, options: VerifyOptions = {}): Promise<PlainbaseEvent<T>> {
  return verifyDelivery<T>(webCrypto, rawBody, headers, secret, options);
}

/** The `v1=` signature of a body, as Plainbase computes it: for a test sender or a receiver's own tests. */
export async function signWebhook(secret: string, timestamp: string, rawBody: RawBody): Promise<string> {
  return signDelivery(webCrypto, secret, timestamp, rawBody);
}

/**
 * The runtime's WebCrypto. Node.js 18 has it only as node:crypto's `webcrypto`, not as a global;
 * the specifier is a variable so that bundlers leave that import alone.
 */
async function webCrypto(): Promise<Crypto> {
  if (globalThis.crypto?.subtle) return globalThis.crypto;
  const nodeCrypto = 'node:crypto';
  const imported = (await import(/* @vite-ignore */ /* webpackIgnore: true */ nodeCrypto)) as { webcrypto?: Crypto };
  if (!imported.webcrypto?.subtle) throw new Error('verifyWebhook needs WebCrypto (crypto.subtle), which this runtime lacks.');
  return imported.webcrypto;
}
