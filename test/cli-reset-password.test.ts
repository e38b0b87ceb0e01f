import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { describeEachEngine } from './support/harness.js';
import { call, OWNER, ownDatabase, runCli, sessionHeaders, startServer, stopServer, type ServerProcess } from './support/server-process.js';

/**
 * `plainbase reset-password`, the way back for a forgotten owner password: the real CLI as a
 * child process beside a running server on the same database, on both engines.
 */
describeEachEngine('plainbase reset-password', (engine) => {
  let server: ServerProcess | undefined;
  let settings: Record<string, string>;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    ({ settings, cleanup } = await ownDatabase(engine, 'reset-password', inject('postgresUrl')));
    server = await startServer(settings);
  }, 120_000);

  afterAll(async () => {
    await stopServer(server);
    await cleanup?.();
  });

  const cli = (variables: Record<string, string>, stdin: string, args: string[]) => runCli(['reset-password', ...args], { ...settings, ...variables }, stdin);

  const signIn = (password: string) => call(server!.base, 'POST', '/v1/auth/sign-in', {}, { email: OWNER.email, password });
  const me = (headers: Record<string, string>) => call(server!.base, 'GET', '/v1/me', headers);

  it('sets the new password, ends every old session, and audits the reset in each of the person\'s workspaces', async () => {
    const first = sessionHeaders(await signIn(OWNER.password));
    const second = sessionHeaders(await signIn(OWNER.password));
    const research = await call(server!.base, 'POST', '/v1/workspaces', first, { name: 'research' });
    expect(research.status).toBe(201);
    expect((await me(first)).status).toBe(200);

    const newPassword = 'a brand new secret 42';
    const reset = await cli({}, `${newPassword}\n`, ['--email', OWNER.email.toUpperCase(), '--password-stdin']);
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stdout).toMatch(/^set a new password for owner@example\.com \(per_\w+\); 2 session\(s\) ended\n$/);
    expect(reset.stderr).toBe('');

    for (const old of [first, second]) expect((await me(old)).status).toBe(401);
    expect((await signIn(OWNER.password)).status).toBe(401);
    const signedIn = await signIn(newPassword);
    expect(signedIn.status).toBe(200);

    for (const workspaceId of [first['x-baas-workspace']!, research.body.id as string]) {
      const audit = await call(server!.base, 'GET', '/v1/audit-log?action=person.password_reset', sessionHeaders(signedIn, workspaceId));
      expect(audit.status).toBe(200);
      expect(audit.body.data).toHaveLength(1);
      expect(audit.body.data[0]).toMatchObject({
        actor: { type: 'system' },
        userAgent: 'plainbase reset-password',
        target: { type: 'person' },
        details: { sessionsEnded: 2 },
      });
      expect(JSON.stringify(audit.body.data[0])).not.toContain(newPassword);
    }

    // Back to the password the other tests (and the server's settings) know, given the warned way.
    const back = await cli({}, '', ['--email', OWNER.email, '--password', OWNER.password]);
    expect(back.code, back.stderr).toBe(0);
    expect(back.stderr).toMatch(/^plainbase: warning: --password puts the password on the command line/);
    expect((await me(sessionHeaders(signedIn))).status).toBe(401);
    expect((await signIn(OWNER.password)).status).toBe(200);
  }, 120_000);

  it('refuses a weak password and an unknown email with one line, and changes nothing', async () => {
    const session = sessionHeaders(await signIn(OWNER.password));
    const refusals: Array<[Record<string, string>, string[], RegExp]> = [
      [{ PLAINBASE_PASSWORD: 'short' }, ['--email', OWNER.email], /^plainbase: The password must be at least 10 characters long\.\n$/],
      [{ PLAINBASE_PASSWORD: 'password123' }, ['--email', OWNER.email], /^plainbase: This password is one of the most common passwords/],
      [{ PLAINBASE_PASSWORD: OWNER.email }, ['--email', OWNER.email], /^plainbase: The password cannot be your email address/],
      [{ PLAINBASE_PASSWORD: 'a long enough secret' }, ['--email', 'nobody@example.com'], /^plainbase: no person has the email nobody@example\.com\n$/],
      [{}, ['--email', OWNER.email], /^plainbase: reset-password needs the new password: --password-stdin/],
      [{ PLAINBASE_PASSWORD: 'a long enough secret' }, [], /^plainbase: reset-password needs --email/],
    ];
    for (const [variables, args, message] of refusals) {
      const refused = await cli(variables, '', args);
      expect([refused.code, refused.stdout]).toEqual([1, '']);
      expect(refused.stderr).toMatch(message);
      expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect((await me(session)).status).toBe(200);
    expect((await signIn(OWNER.password)).status).toBe(200);
  }, 120_000);
});
