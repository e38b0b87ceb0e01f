import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSession } from '../src/modules/sessions/sessions.js';
import { sha256Hex } from '../src/secrets.js';
import { createOwner } from '../src/modules/setup/first-owner.js';
import { addMember, Client, expectError, OWNER, sessionSetCookie, signedInOwner, type Reply } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

const MINUTE = 60_000;
const IDLE_MINUTES = 10;

/**
 * A person's sessions: listing them (never their secrets), ending one, signing out everywhere,
 * and the idle limit, with two people side by side so that each proves the other untouched.
 */
describeEachEngine('sessions: list, end one, sign out everywhere, idle expiry', (engine) => {
  let t: TestApp;
  let owner: Client & { personId: string };
  let member: Client & { personId: string };

  beforeAll(async () => {
    t = await startTestApp(engine, { sessionIdleSeconds: IDLE_MINUTES * 60 });
    owner = await signedInOwner(t);
    member = await addMember(t, owner, 'member@example.com', 'editor');
  });
  afterAll(() => t?.close());

  /**
   * The owner signed in once more, from another address and browser: opened as sign-in opens it
   * (sign-in itself, and its password hashing, is tested in auth.test.ts), and used from there.
   */
  async function ownerElsewhere(address: string, userAgent: string): Promise<Client> {
    const client = new Client(t);
    client.remoteAddress = address;
    client.cookie = (await createSession(t.deps.db, t.deps, owner.personId, { ip: address, userAgent })).token;
    client.workspaceId = owner.workspaceId;
    return client;
  }
  /** The owner's first session ended: a new one, as a sign-in would open it. */
  async function renewOwner(): Promise<void> {
    owner.cookie = (await createSession(t.deps.db, t.deps, owner.personId)).token;
  }
  const auditActions = async (action: string) =>
    (await t.deps.db.selectFrom('audit_log').select(['actor_id', 'details', 'workspace_id']).where('action', '=', action).execute());

  it('lists only the caller\'s own live sessions, the calling one current, with no secret in sight', async () => {
    const laptop = await ownerElsewhere('203.0.113.7', 'Laptop browser');
    const phone = await ownerElsewhere('2001:db8::5', 'Phone browser');
    const listed: Reply = await laptop.get('/v1/auth/sessions');
    expect(listed.status).toBe(200);
    expect(listed.body.nextCursor).toBeNull();
    const mine = listed.body.data;
    expect(mine).toHaveLength(3);
    expect(mine.map((s: any) => s.current)).toEqual([false, true, false]);
    expect(mine[1]).toMatchObject({ id: expect.stringMatching(/^ses_[0-9a-z]{26}$/), ip: '203.0.113.7', userAgent: 'Laptop browser', current: true });
    expect(mine[2]).toMatchObject({ ip: '2001:db8::5', userAgent: 'Phone browser', current: false });
    for (const session of mine) expect(Object.keys(session).sort()).toEqual(['createdAt', 'current', 'expiresAt', 'id', 'ip', 'lastUsedAt', 'userAgent']);
    const text = JSON.stringify(listed.body);
    for (const client of [owner, laptop, phone]) expect(text).not.toContain(client.cookie);

    // The member sees one session, their own; none of the owner's.
    const theirs = (await member.get('/v1/auth/sessions')).body.data;
    expect(theirs).toHaveLength(1);
    expect(theirs[0].current).toBe(true);
    expect(mine.map((s: any) => s.id)).not.toContain(theirs[0].id);

    // Pages follow one another with no repeat.
    const first = await laptop.get('/v1/auth/sessions?limit=2');
    const second = await laptop.get(`/v1/auth/sessions?limit=2&cursor=${first.body.nextCursor}`);
    expect([...first.body.data, ...second.body.data].map((s: any) => s.id)).toEqual(mine.map((s: any) => s.id));
    expect(second.body.nextCursor).toBeNull();

    expect((await laptop.post('/v1/auth/sign-out-everywhere', { keepCurrent: false })).body).toEqual({ ended: 3 });
    await renewOwner();
  });

  it('ends one of one\'s own sessions by id; another person\'s is 404 and keeps working', async () => {
    const laptop = await ownerElsewhere('203.0.113.8', 'Laptop');
    const phone = await ownerElsewhere('203.0.113.9', 'Phone');
    const sessions = (await laptop.get('/v1/auth/sessions')).body.data;
    const phoneSession = sessions.find((s: any) => s.userAgent === 'Phone')!;
    const memberSession = (await member.get('/v1/auth/sessions')).body.data[0];

    const refused = expectError(await laptop.delete(`/v1/auth/sessions/${memberSession.id}`), 404, 'NOT_FOUND');
    expect(refused.message).toBe(expectError(await laptop.delete(`/v1/auth/sessions/ses_${'0'.repeat(26)}`), 404, 'NOT_FOUND').message);
    expectError(await laptop.delete('/v1/auth/sessions/not-a-session'), 400, 'INVALID_REQUEST');
    expect((await member.get('/v1/auth/session')).status).toBe(200);

    const ended = await laptop.delete(`/v1/auth/sessions/${phoneSession.id}`);
    expect(ended.status).toBe(204);
    // Not the calling session: the laptop's cookie stays.
    expect(sessionSetCookie(ended)).toBeNull();
    expectError(await phone.get('/v1/auth/session'), 401, 'UNAUTHENTICATED');
    expect((await laptop.get('/v1/auth/session')).status).toBe(200);
    expectError(await laptop.delete(`/v1/auth/sessions/${phoneSession.id}`), 404, 'NOT_FOUND');

    // Ending the calling session signs it out, cookie and all.
    const own = (await laptop.get('/v1/auth/sessions')).body.data.find((s: any) => s.current)!;
    const self = await laptop.delete(`/v1/auth/sessions/${own.id}`);
    expect(self.status).toBe(204);
    expect(sessionSetCookie(self)?.value).toBe('');
    expectError(await laptop.get('/v1/auth/session'), 401, 'UNAUTHENTICATED');
    expect((await owner.get('/v1/auth/session')).status).toBe(200);

    const audited = await auditActions('auth.session_ended');
    expect(audited.filter((row) => row.actor_id === owner.personId).map((row) => JSON.parse(String(row.details)))).toEqual([
      { sessionId: phoneSession.id, current: false },
      { sessionId: own.id, current: true },
    ]);
  });

  it('signs out everywhere: all but the caller with keepCurrent, else all; the other person is untouched', async () => {
    const laptop = await ownerElsewhere('203.0.113.10', 'Laptop');
    const phone = await ownerElsewhere('203.0.113.11', 'Phone');
    const kept = await laptop.post('/v1/auth/sign-out-everywhere', { keepCurrent: true });
    expect(kept.status).toBe(200);
    expect(kept.body).toEqual({ ended: 2 });
    expect(sessionSetCookie(kept)).toBeNull();
    expectError(await owner.get('/v1/auth/session'), 401, 'UNAUTHENTICATED');
    expectError(await phone.get('/v1/auth/session'), 401, 'UNAUTHENTICATED');
    expect((await laptop.get('/v1/auth/sessions')).body.data.map((s: any) => s.current)).toEqual([true]);

    await renewOwner();
    const all = await laptop.post('/v1/auth/sign-out-everywhere', {});
    expect(all.body).toEqual({ ended: 2 });
    expect(sessionSetCookie(all)?.value).toBe('');
    expectError(await laptop.get('/v1/auth/session'), 401, 'UNAUTHENTICATED');
    expectError(await owner.get('/v1/auth/session'), 401, 'UNAUTHENTICATED');
    expect((await member.get('/v1/auth/sessions')).body.data).toHaveLength(1);
    expectError(await laptop.post('/v1/auth/sign-out-everywhere', {}), 401, 'UNAUTHENTICATED');

    const audited = (await auditActions('auth.signed_out_everywhere')).filter((row) => row.actor_id === owner.personId).slice(-2);
    // In each of the owner's workspaces (one), as sign-ins are.
    expect(audited.map((row) => JSON.parse(String(row.details)))).toEqual([
      { sessionsEnded: 2, keptCurrent: true },
      { sessionsEnded: 2, keptCurrent: false },
    ]);
    expect(audited.every((row) => row.workspace_id === owner.workspaceId)).toBe(true);
    await renewOwner();
  });

  it('refuses a body it does not know, and a cross-site sign-out everywhere', async () => {
    expectError(await owner.post('/v1/auth/sign-out-everywhere', { keepCurrent: 'yes' }), 400, 'INVALID_REQUEST');
    expectError(await owner.post('/v1/auth/sign-out-everywhere', { everyone: true }), 400, 'INVALID_REQUEST');
    expectError(await owner.post('/v1/auth/sign-out-everywhere', {}, { origin: 'https://evil.example' }), 403, 'FORBIDDEN');
    expect((await owner.get('/v1/auth/session')).status).toBe(200);
  });

  it('ends a session left unused for the idle limit, and records use at most once a minute', async () => {
    // A session of the member's of its own, tracked by its digest.
    const idle = new Client(t);
    idle.cookie = (await createSession(t.deps.db, t.deps, member.personId)).token;
    const lastUse = async () =>
      (await t.deps.db.selectFrom('sessions').select('last_used_at').where('token_hash', '=', sha256Hex(idle.cookie!)).executeTakeFirstOrThrow()).last_used_at;
    const signedInAt = await lastUse();

    // Within the same minute: many requests, no write.
    for (let i = 0; i < 3; i++) {
      t.clock.advance(15_000);
      expect((await idle.get('/v1/auth/session')).status).toBe(200);
      expect(await lastUse()).toBe(signedInAt);
    }
    // A minute on: written once.
    t.clock.advance(15_000);
    expect((await idle.get('/v1/workspaces')).status).toBe(200);
    expect(await lastUse()).toBe(t.clock.now().toISOString());

    // Used just inside the limit each time, it lives on well past one limit from sign-in.
    for (let i = 0; i < 3; i++) {
      t.clock.advance(IDLE_MINUTES * MINUTE - 1000);
      expect((await idle.get('/v1/workspaces')).status).toBe(200);
    }
    // Left alone for the limit: ended, and no longer listed to its person.
    t.clock.advance(IDLE_MINUTES * MINUTE);
    expectError(await idle.get('/v1/workspaces'), 401, 'UNAUTHENTICATED');
    const other = new Client(t);
    other.cookie = (await createSession(t.deps.db, t.deps, member.personId)).token;
    expect((await other.get('/v1/auth/sessions')).body.data.map((s: any) => s.current)).toEqual([true]);
  });
});

/** The Set-Cookie line of a reply for `name`, split into its value and attributes; null when absent. */
function cookieLine(headers: Record<string, unknown>, name: string): { value: string; attributes: Map<string, string> } | null {
  const line = [headers['set-cookie'] ?? []].flat().map(String).find((header) => header.startsWith(`${name}=`));
  if (!line) return null;
  const [pair, ...rest] = line.split(';').map((part) => part.trim());
  const attributes = new Map(rest.map((part) => [part.split('=')[0]!.toLowerCase(), part.split('=')[1] ?? ''] as const));
  return { value: pair!.slice(name.length + 1), attributes };
}

/** The cookie's name follows PLAINBASE_PUBLIC_URL; the server reads only the name it sets. Cookies, not storage: SQLite. */
describe('the session cookie\'s name', () => {
  async function signInOn(publicUrl: string, env: 'production' | 'development') {
    const t = await startTestApp('sqlite', { publicUrl, env });
    await createOwner(t.deps, OWNER);
    const reply = await t.app.inject({ method: 'POST', url: '/v1/auth/sign-in', payload: { email: OWNER.email, password: OWNER.password } });
    expect(reply.statusCode).toBe(200);
    const session = (cookie: string) => t.app.inject({ method: 'GET', url: '/v1/auth/session', headers: { cookie } });
    return { t, headers: reply.headers as Record<string, unknown>, session };
  }

  it('is __Host-plainbase_session over HTTPS (Secure even in development, Path=/, no Domain), and plainbase_session is not read', async () => {
    const { t, headers, session } = await signInOn('https://data.example.com', 'development');
    try {
      const cookie = cookieLine(headers, '__Host-plainbase_session');
      expect(cookie).not.toBeNull();
      expect(cookieLine(headers, 'plainbase_session')).toBeNull();
      expect(cookie!.attributes.has('secure')).toBe(true);
      expect(cookie!.attributes.get('path')).toBe('/');
      expect(cookie!.attributes.has('domain')).toBe(false);
      expect(cookie!.attributes.has('httponly')).toBe(true);
      expect((await session(`__Host-plainbase_session=${cookie!.value}`)).statusCode).toBe(200);
      // The same token under the plain name (planted by a sibling site, say) is no credential here.
      expect((await session(`plainbase_session=${cookie!.value}`)).statusCode).toBe(401);
      const out = await t.app.inject({ method: 'POST', url: '/v1/auth/sign-out', headers: { cookie: `__Host-plainbase_session=${cookie!.value}`, origin: 'https://data.example.com' } });
      expect(out.statusCode).toBe(204);
      const cleared = cookieLine(out.headers as Record<string, unknown>, '__Host-plainbase_session');
      expect(cleared?.value).toBe('');
      expect(cleared?.attributes.has('secure')).toBe(true);
      expect((await session(`__Host-plainbase_session=${cookie!.value}`)).statusCode).toBe(401);
    } finally {
      await t.close();
    }
  });

  it('is plainbase_session over plain http, and a __Host- cookie is not read there', async () => {
    const { t, headers, session } = await signInOn('http://plainbase.test', 'development');
    try {
      const cookie = cookieLine(headers, 'plainbase_session');
      expect(cookie).not.toBeNull();
      expect(cookieLine(headers, '__Host-plainbase_session')).toBeNull();
      // Development over http: not Secure, so http://localhost works.
      expect(cookie!.attributes.has('secure')).toBe(false);
      expect((await session(`plainbase_session=${cookie!.value}`)).statusCode).toBe(200);
      expect((await session(`__Host-plainbase_session=${cookie!.value}`)).statusCode).toBe(401);
    } finally {
      await t.close();
    }
  });
});
