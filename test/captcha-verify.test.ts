import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../src/config.js';
import { LazyCaptchaClient, verifyCaptcha, type CaptchaCheck, type CaptchaVerdict } from '../src/delivery/captcha-verify.js';
import type { Deps } from '../src/deps.js';
import { CaptchaStandIn } from './support/captcha-stand-in.js';
import { testConfig } from './support/harness.js';

/**
 * The CAPTCHA check against a real stand-in of the providers' siteverify endpoint on loopback,
 * addressed by host name. It fails closed: whatever is not a clear `success: true` refuses.
 */

const SECRET = 'secret-0x4AAAAAAA-never-logged';
const standIn = new CaptchaStandIn();
let verifyUrl: string;
const made: Deps[] = [];
const verdicts: CaptchaVerdict[] = [];

/** Deps with only what the check reads: the settings and its own connection pool. */
function depsWith(overrides: Partial<Config> = {}, resolveHost?: Deps['resolveHost']): Deps {
  const config = testConfig({
    env: 'development',
    webhookAllowPrivate: true,
    captchaVerifyUrls: { turnstile: verifyUrl, hcaptcha: verifyUrl.replace('/siteverify', '/hcaptcha') },
    captchaTimeoutMs: 5000,
    ...overrides,
  });
  const deps = { config, resolveHost, services: {} } as Deps;
  deps.services.captchaClient = new LazyCaptchaClient(deps);
  made.push(deps);
  return deps;
}

async function verify(deps: Deps, check: Partial<CaptchaCheck> = {}): Promise<CaptchaVerdict> {
  const verdict = await verifyCaptcha(deps, { provider: 'turnstile', secret: SECRET, token: 'pass-1', remoteIp: '203.0.113.7', ...check });
  verdicts.push(verdict);
  return verdict;
}

beforeAll(async () => {
  verifyUrl = await standIn.start();
});

afterEach(() => {
  standIn.answer = new CaptchaStandIn().answer;
});

afterAll(async () => {
  await Promise.all(made.map((deps) => deps.services.captchaClient.close()));
  await standIn.stop();
});

describe('verifyCaptcha', () => {
  it('passes a token the provider accepts, sending secret, response and remoteip form-encoded', async () => {
    const deps = depsWith();
    const before = standIn.calls.length;
    expect(await verify(deps, { token: 'pass-abc' })).toEqual({ ok: true });
    const call = standIn.calls[before]!;
    expect(call.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(call.form.get('secret')).toBe(SECRET);
    expect(call.form.get('response')).toBe('pass-abc');
    expect(call.form.get('remoteip')).toBe('203.0.113.7');
  });

  it('asks each provider at its own URL', async () => {
    const deps = depsWith();
    const before = standIn.calls.length;
    expect(await verify(deps, { provider: 'hcaptcha', token: 'pass-h' })).toEqual({ ok: true });
    expect(await verify(deps, { provider: 'turnstile', token: 'pass-t' })).toEqual({ ok: true });
    expect(standIn.calls.slice(before).map((call) => [call.path, call.form.get('response')])).toEqual([['/hcaptcha', 'pass-h'], ['/siteverify', 'pass-t']]);
  });

  it('refuses a token the provider refuses, with its error codes for the log', async () => {
    const verdict = await verify(depsWith(), { token: 'wrong' });
    expect(verdict).toEqual({ ok: false, reason: 'rejected', detail: 'turnstile refused the token (invalid-input-response)' });
  });

  it('refuses a missing or empty token without asking the provider', async () => {
    const deps = depsWith();
    const before = standIn.calls.length;
    expect(await verify(deps, { token: undefined })).toMatchObject({ ok: false, reason: 'missing' });
    expect(await verify(deps, { token: '' })).toMatchObject({ ok: false, reason: 'missing' });
    expect(await verify(deps, { token: 'x'.repeat(100_000) })).toMatchObject({ ok: false, reason: 'rejected' });
    expect(standIn.calls.length).toBe(before);
  });

  it('leaves remoteip out when the address is unknown', async () => {
    const before = standIn.calls.length;
    expect(await verify(depsWith(), { remoteIp: null })).toEqual({ ok: true });
    expect(standIn.calls[before]!.form.has('remoteip')).toBe(false);
  });

  it('fails closed when the provider does not answer in time', async () => {
    standIn.answer = () => 'silent';
    const started = Date.now();
    const verdict = await verify(depsWith({ captchaTimeoutMs: 300 }));
    expect(verdict).toMatchObject({ ok: false, reason: 'unavailable' });
    expect((verdict as { detail: string }).detail).toMatch(/no answer within 300 ms/);
    // Bounded by the setting, not by the webhook's 10 s (generous: the machine may be loaded).
    expect(Date.now() - started).toBeLessThan(8000);
  });

  it.each([
    ['a huge answer', { status: 200, body: JSON.stringify({ success: true, padding: 'x'.repeat(1024 * 1024) }) }],
    ['an HTML page', { status: 200, body: '<html><body>Just a moment…</body></html>', contentType: 'text/html' }],
    ['binary bytes', { status: 200, body: Buffer.from([0, 159, 146, 150, 0xff]) }],
    ['success as a string', { status: 200, body: '{"success":"true"}' }],
    ['an array', { status: 200, body: '[{"success":true}]' }],
    ['success only inherited', { status: 200, body: '{"__proto__":{"success":true}}' }],
    ['an error status with success', { status: 500, body: '{"success":true}' }],
    ['a redirect', { status: 302, body: '{"success":true}' }],
    ['an empty answer', { status: 200, body: '' }],
  ])('fails closed on %s', async (_name, answer) => {
    standIn.answer = () => answer;
    expect(await verify(depsWith())).toMatchObject({ ok: false, reason: 'unavailable' });
  });

  it('fails closed when the provider cannot be reached', async () => {
    // A port that was just free: nothing listens on it.
    const closed: Server = createServer();
    const port = await new Promise<number>((resolve) => closed.listen(0, '127.0.0.1', () => resolve((closed.address() as AddressInfo).port)));
    await new Promise((resolve) => closed.close(resolve));
    const deps = depsWith({ captchaVerifyUrls: { turnstile: `http://localhost:${port}/siteverify`, hcaptcha: verifyUrl } });
    const verdict = await verify(deps);
    expect(verdict).toMatchObject({ ok: false, reason: 'unavailable' });
    expect((verdict as { detail: string }).detail).toMatch(/ECONNREFUSED/);
  });

  it('never calls a private address unless the test setting allows it', async () => {
    const before = standIn.calls.length;
    // localhost by name, and a public-looking name that resolves to loopback (DNS rebinding).
    const byName = depsWith({ webhookAllowPrivate: false });
    const rebinding = depsWith(
      { webhookAllowPrivate: false, captchaVerifyUrls: { turnstile: verifyUrl.replace('localhost', 'captcha.example.com'), hcaptcha: verifyUrl } },
      async () => ['127.0.0.1'],
    );
    const literal = depsWith({ webhookAllowPrivate: false, captchaVerifyUrls: { turnstile: verifyUrl.replace('localhost', '[::ffff:127.0.0.1]'), hcaptcha: verifyUrl } });
    for (const deps of [byName, rebinding, literal]) {
      expect(await verify(deps)).toEqual({ ok: false, reason: 'unavailable', detail: 'turnstile verification endpoint is not an allowed destination' });
    }
    expect(standIn.calls.length).toBe(before);
  });

  it('calls http:// only in development', async () => {
    const before = standIn.calls.length;
    expect(await verify(depsWith({ env: 'production' }))).toMatchObject({ ok: false, reason: 'unavailable' });
    expect(standIn.calls.length).toBe(before);
  });

  it('keeps one connection pool per app, and a closed one opens again', async () => {
    const deps = depsWith();
    const first = await deps.services.captchaClient.poster();
    expect(await deps.services.captchaClient.poster()).toBe(first);
    await deps.services.captchaClient.close();
    expect(await verify(deps)).toEqual({ ok: true });
    expect(await deps.services.captchaClient.poster()).not.toBe(first);
  });

  it('never puts the secret or the token into a verdict', () => {
    expect(verdicts.length).toBeGreaterThan(15);
    for (const verdict of verdicts) {
      const text = JSON.stringify(verdict);
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain('pass-');
    }
  });
});
