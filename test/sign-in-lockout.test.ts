import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createOwner } from '../src/modules/setup/first-owner.js';
import { OWNER } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/**
 * The sign-in lock under concurrent guesses, over a real listening server on loopback: each burst
 * is sent at once, as separate HTTP requests, so the server really has them in flight together
 * (password checks run on the thread pool, the claims on the database). Every request comes from
 * 127.0.0.1, which is what the per-address test wants; the per-account tests stay far below the
 * per-address limit.
 */
describeEachEngine('sign-in lockout under concurrent guesses', (engine) => {
  let t: TestApp;
  let base: string;

  async function start(overrides: Parameters<typeof startTestApp>[1] = {}): Promise<void> {
    t = await startTestApp(engine, overrides);
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  }
  beforeEach(async () => start());
  afterEach(async () => { await t?.close(); });

  const signIn = async (email: string, password: string): Promise<number> => {
    const response = await fetch(`${base}/v1/auth/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
    await response.arrayBuffer();
    return response.status;
  };
  const failuresAudited = async () =>
    (await t.deps.db.selectFrom('audit_log').select('id').where('action', '=', 'auth.sign_in_failed').execute()).length;
  const tally = (statuses: number[]) => statuses.reduce<Record<number, number>>((counts, status) => ({ ...counts, [status]: (counts[status] ?? 0) + 1 }), {});

  it('checks at most one more password in a burst of 40 after 4 failures, then refuses the right one', async () => {
    await createOwner(t.deps, OWNER);
    expect(t.deps.config.signInMaxFailures).toBe(5);
    for (let i = 0; i < 4; i++) expect(await signIn(OWNER.email, `wrong ${i}`)).toBe(401);

    const burst = await Promise.all(Array.from({ length: 40 }, (_, i) => signIn(OWNER.email, `burst ${i}`)));
    // The fifth check is the last one the account has: exactly one request gets it.
    expect(tally(burst)).toEqual({ 401: 1, 429: 39 });
    expect(await failuresAudited()).toBe(5);

    expect(await signIn(OWNER.email, OWNER.password)).toBe(429);
    expect(await failuresAudited()).toBe(5);
    t.clock.advance(t.deps.config.signInLockSeconds * 1000);
    expect(await signIn(OWNER.email, OWNER.password)).toBe(200);
  });

  it('lets the right password inside such a burst in only if it got the one check left', async () => {
    await createOwner(t.deps, OWNER);
    for (let i = 0; i < 4; i++) expect(await signIn(OWNER.email, `wrong ${i}`)).toBe(401);

    const passwords = Array.from({ length: 40 }, (_, i) => `burst ${i}`);
    passwords.splice(20, 0, OWNER.password);
    const burst = await Promise.all(passwords.map((password) => signIn(OWNER.email, password)));
    const right = burst[20]!;
    const wrong = burst.filter((_, index) => index !== 20);
    // One password is checked, whichever request claimed the check; every other one is refused unchecked.
    expect(burst.filter((status) => status !== 429)).toHaveLength(1);
    if (right === 200) {
      expect(wrong.every((status) => status === 429)).toBe(true);
      expect(await failuresAudited()).toBe(4);
    } else {
      expect(right).toBe(429);
      expect(tally(wrong)).toEqual({ 401: 1, 429: 39 });
      expect(await failuresAudited()).toBe(5);
      expect(await signIn(OWNER.email, OWNER.password)).toBe(429);
    }
  });

  it('counts an address atomically too: a burst over many accounts checks no more than the address may fail', async () => {
    await t.close();
    await start({ signInMaxFailuresPerAddress: 10 });
    await createOwner(t.deps, OWNER);
    const burst = await Promise.all(Array.from({ length: 40 }, (_, i) => signIn(`person${i}@example.com`, 'not a password')));
    expect(tally(burst)).toEqual({ 401: 10, 429: 30 });
    expect(await failuresAudited()).toBe(10);
    // The address is locked for everyone behind it, the right password included, until the window is over.
    expect(await signIn(OWNER.email, OWNER.password)).toBe(429);
    t.clock.advance(t.deps.config.signInLockSeconds * 1000);
    expect(await signIn(OWNER.email, OWNER.password)).toBe(200);
  });

  it('gives a right password its claim back: people signing in from one address use none of its failures', async () => {
    await t.close();
    await start({ signInMaxFailuresPerAddress: 3 });
    const people = Array.from({ length: 8 }, (_, i) => ({ email: `member${i}@example.com`, password: `member password ${i}` }));
    for (const person of people) await createOwner(t.deps, person);
    // One after the other: a check in flight holds one of the address's attempts until it is answered.
    for (const person of people) expect(await signIn(person.email, person.password)).toBe(200);
    // Two failures later the address still has one check left: the successes cost nothing.
    expect(await signIn('nobody@example.com', 'wrong')).toBe(401);
    expect(await signIn('nobody@example.com', 'wrong')).toBe(401);
    expect(await signIn(people[0]!.email, people[0]!.password)).toBe(200);
    expect(await signIn('nobody@example.com', 'wrong')).toBe(401);
    expect(await signIn(people[1]!.email, people[1]!.password)).toBe(429);
  });
});
