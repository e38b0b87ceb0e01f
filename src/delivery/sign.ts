import { createHmac, randomBytes } from 'node:crypto';

/**
 * Webhook signatures (docs/design.md §7): `v1=` + lowercase hex HMAC-SHA-256, keyed by
 * the UTF-8 bytes of the whole secret (whsec_ included), over `timestamp + "." + body bytes`.
 * The test vectors in test/fixtures/webhook-signatures.json pin this down.
 */
export function signPayload(secret: string, timestamp: string, body: Buffer | string): string {
  const hmac = createHmac('sha256', Buffer.from(secret, 'utf8'));
  hmac.update(`${timestamp}.`);
  hmac.update(body);
  return `v1=${hmac.digest('hex')}`;
}

/** A new signing secret: `whsec_` and 32 random bytes in base64url. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}
