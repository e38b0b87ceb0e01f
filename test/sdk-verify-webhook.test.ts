import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { signPayload } from '../src/delivery/sign.js';
import { verifyWebhook, WebhookVerificationError } from '../sdk/src/verify-webhook.js';

const vectors = JSON.parse(readFileSync(new URL('./fixtures/webhook-signatures.json', import.meta.url), 'utf8')) as {
  cases: { name: string; secret: string; timestamp: string; body: string; signature: string }[];
};

describe('webhook signatures', () => {
  it.each(vectors.cases.map((c) => [c.name, c]))('the signer and the verifier both pass the vector "%s"', (_name, vector) => {
    expect(signPayload(vector.secret, vector.timestamp, Buffer.from(vector.body, 'utf8'))).toBe(vector.signature);
    const now = Number(vector.timestamp) * 1000;
    const headers = { 'x-baas-timestamp': vector.timestamp, 'x-baas-signature': vector.signature };
    expect(verifyWebhook(vector.body, headers, vector.secret, { now })).toEqual(JSON.parse(vector.body));
    expect(verifyWebhook(Buffer.from(vector.body, 'utf8'), headers, vector.secret, { now })).toEqual(JSON.parse(vector.body));
  });

  const [vector] = vectors.cases;
  const now = Number(vector!.timestamp) * 1000;
  const headers = { 'x-baas-timestamp': vector!.timestamp, 'x-baas-signature': vector!.signature };
  const reasonOf = (run: () => unknown) => {
    try {
      run();
    } catch (error) {
      expect(error).toBeInstanceOf(WebhookVerificationError);
      return (error as WebhookVerificationError).reason;
    }
    return 'accepted';
  };

  it('refuses a changed body, a wrong secret, a missing header and a stale or future timestamp', () => {
    expect(reasonOf(() => verifyWebhook(`${vector!.body} `, headers, vector!.secret, { now }))).toBe('invalid-signature');
    expect(reasonOf(() => verifyWebhook(vector!.body, headers, `${vector!.secret}x`, { now }))).toBe('invalid-signature');
    expect(reasonOf(() => verifyWebhook(vector!.body, { 'x-baas-timestamp': vector!.timestamp }, vector!.secret, { now }))).toBe('missing-header');
    expect(reasonOf(() => verifyWebhook(vector!.body, headers, vector!.secret, { now: now + 301_000 }))).toBe('timestamp-out-of-tolerance');
    expect(reasonOf(() => verifyWebhook(vector!.body, headers, vector!.secret, { now: now - 301_000 }))).toBe('timestamp-out-of-tolerance');
    expect(reasonOf(() => verifyWebhook(vector!.body, headers, vector!.secret, { now: now + 299_000 }))).toBe('accepted');
    expect(reasonOf(() => verifyWebhook(vector!.body, headers, vector!.secret, { now: now + 10_000, toleranceSeconds: 5 }))).toBe('timestamp-out-of-tolerance');
    expect(reasonOf(() => verifyWebhook(vector!.body, { ...headers, 'x-baas-timestamp': 'soon' }, vector!.secret, { now }))).toBe('invalid-timestamp');
  });

  it('reads headers from a Fetch Headers object too', () => {
    expect(verifyWebhook(vector!.body, new Headers(headers), vector!.secret, { now })).toEqual(JSON.parse(vector!.body));
  });
});
