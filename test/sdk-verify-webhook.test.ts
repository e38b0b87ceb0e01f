import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { signPayload } from '../src/delivery/sign.js';
import { PlainbaseError, signWebhook, verifyWebhook, WebhookVerificationError } from '../sdk/src/index.js';

const vectors = JSON.parse(readFileSync(new URL('./fixtures/webhook-signatures.json', import.meta.url), 'utf8')) as {
  cases: { name: string; secret: string; timestamp: string; body: string; signature: string }[];
};

// Pure functions over fixed vectors: no database, so no engine to run them on.
describe('webhook signatures', () => {
  it.each(vectors.cases.map((c) => [c.name, c]))('the signer and the verifier both pass the vector "%s"', async (_name, vector) => {
    expect(signPayload(vector.secret, vector.timestamp, Buffer.from(vector.body, 'utf8'))).toBe(vector.signature);
    expect(await signWebhook(vector.secret, vector.timestamp, vector.body)).toBe(vector.signature);
    const now = Number(vector.timestamp) * 1000;
    const headers = { 'x-baas-timestamp': vector.timestamp, 'x-baas-signature': vector.signature };
    const event = JSON.parse(vector.body);
    expect(await verifyWebhook(vector.body, headers, vector.secret, { now })).toEqual(event);
    expect(await verifyWebhook(Buffer.from(vector.body, 'utf8'), headers, vector.secret, { now })).toEqual(event);
    const bytes = new TextEncoder().encode(vector.body);
    expect(await verifyWebhook(bytes.buffer, headers, vector.secret, { now: new Date(now) })).toEqual(event);
  });

  const [vector] = vectors.cases;
  const now = Number(vector!.timestamp) * 1000;
  const headers = { 'x-baas-timestamp': vector!.timestamp, 'x-baas-signature': vector!.signature };
  const reasonOf = async (run: () => Promise<unknown>) => {
    try {
      await run();
    } catch (error) {
      expect(error).toBeInstanceOf(WebhookVerificationError);
      expect(error).toBeInstanceOf(PlainbaseError);
      expect((error as PlainbaseError).code).toBe('WEBHOOK_VERIFICATION_FAILED');
      return (error as WebhookVerificationError).reason;
    }
    return 'accepted';
  };

  it('refuses a changed body, a wrong secret, a missing header and a stale or future timestamp', async () => {
    expect(await reasonOf(() => verifyWebhook(`${vector!.body} `, headers, vector!.secret, { now }))).toBe('invalid-signature');
    expect(await reasonOf(() => verifyWebhook(vector!.body, headers, `${vector!.secret}x`, { now }))).toBe('invalid-signature');
    expect(await reasonOf(() => verifyWebhook(vector!.body, { 'x-baas-timestamp': vector!.timestamp }, vector!.secret, { now }))).toBe('missing-header');
    expect(await reasonOf(() => verifyWebhook(vector!.body, headers, vector!.secret, { now: now + 301_000 }))).toBe('timestamp-out-of-tolerance');
    expect(await reasonOf(() => verifyWebhook(vector!.body, headers, vector!.secret, { now: now - 301_000 }))).toBe('timestamp-out-of-tolerance');
    expect(await reasonOf(() => verifyWebhook(vector!.body, headers, vector!.secret, { now: now + 299_000 }))).toBe('accepted');
    expect(await reasonOf(() => verifyWebhook(vector!.body, headers, vector!.secret, { now: now + 10_000, toleranceSeconds: 5 }))).toBe('timestamp-out-of-tolerance');
    expect(await reasonOf(() => verifyWebhook(vector!.body, { ...headers, 'x-baas-timestamp': 'soon' }, vector!.secret, { now }))).toBe('invalid-timestamp');
  });

  it('refuses malformed signatures, and accepts any valid one of several', async () => {
    const upper = vector!.signature.replace(/^v1=/, '').toUpperCase();
    for (const signature of ['v1=', 'v1=zz', `v1=${upper}`, vector!.signature.slice(0, -2), `v0=${vector!.signature.slice(3)}`, `${vector!.signature}00`]) {
      expect(await reasonOf(() => verifyWebhook(vector!.body, { ...headers, 'x-baas-signature': signature }, vector!.secret, { now }))).toBe('invalid-signature');
    }
    const several = `v1=${'0'.repeat(64)}, ${vector!.signature}`;
    expect(await reasonOf(() => verifyWebhook(vector!.body, { ...headers, 'x-baas-signature': several }, vector!.secret, { now }))).toBe('accepted');
  });

  it('refuses a genuinely signed body that is not JSON in UTF-8', async () => {
    const timestamp = vector!.timestamp;
    for (const body of [Buffer.from('not json'), Buffer.from([0x7b, 0xff, 0x7d])]) {
      const signature = signPayload(vector!.secret, timestamp, body);
      expect(await reasonOf(() => verifyWebhook(body, { 'x-baas-timestamp': timestamp, 'x-baas-signature': signature }, vector!.secret, { now }))).toBe('invalid-body');
    }
  });

  it('reads headers from a Fetch Headers object, a mixed-case object, or arrays of values, and own keys only', async () => {
    expect(await verifyWebhook(vector!.body, new Headers(headers), vector!.secret, { now })).toEqual(JSON.parse(vector!.body));
    const mixed = { 'X-Baas-Timestamp': vector!.timestamp, 'X-BAAS-SIGNATURE': [vector!.signature] };
    expect(await verifyWebhook(vector!.body, mixed, vector!.secret, { now })).toEqual(JSON.parse(vector!.body));
    // A header inherited through the prototype is no header.
    const inherited = Object.create({ 'x-baas-signature': vector!.signature }) as Record<string, string>;
    inherited['x-baas-timestamp'] = vector!.timestamp;
    expect(await reasonOf(() => verifyWebhook(vector!.body, inherited, vector!.secret, { now }))).toBe('missing-header');
  });
});
