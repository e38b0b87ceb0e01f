import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { describeEachEngine } from './support/harness.js';
import { call, OWNER, ownDatabase, runCli, sessionHeaders, signInOwner, startServer, stopServer, type ServerProcess } from './support/server-process.js';

/**
 * `plainbase create-key`, the first key without the dashboard (README walkthrough, step 2): the
 * real CLI as a child process, beside a running server on the same database, whose HTTP API then
 * takes the key. On both engines, since the command writes to the database.
 */
describeEachEngine('plainbase create-key', (engine) => {
  let server: ServerProcess | undefined;
  let settings: Record<string, string>;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    ({ settings, cleanup } = await ownDatabase(engine, 'create-key', inject('postgresUrl')));
    server = await startServer(settings);
  }, 120_000);

  afterAll(async () => {
    await stopServer(server);
    await cleanup?.();
  });

  /**
   * Runs the CLI on the server's database, the password given as PLAINBASE_PASSWORD (the safe
   * form: a process's environment is its user's alone); answers exit code and output.
   */
  const cli = (...args: string[]) => cliWith({ PLAINBASE_PASSWORD: OWNER.password }, '', args);
  const cliWith = (variables: Record<string, string>, stdin: string, args: string[]) => runCli(['create-key', ...args], { ...settings, ...variables }, stdin);

  const me = (secret: string) => call(server!.base, 'GET', '/v1/me', { authorization: `Bearer ${secret}` });

  it('prints only the secret of a key the running server takes, scoped as asked, audited as the person\'s', async () => {
    const made = await cli('--email', OWNER.email, '--name', 'import script', '--scopes', 'records:read, records:create');
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toMatch(/^pb_live_[0-9a-z]{26}_[0-9A-Za-z]{49}\n$/);
    expect(made.stderr).toMatch(/^created key key_\w+ "import script" of owner@example\.com in workspace ws_\w+ "default" \(records:read, records:create\); its secret above is shown this once\n$/);

    const reply = await me(made.stdout.trim());
    expect(reply.status).toBe(200);
    // The suite's servers hash passwords cheaply (support/server-process.ts), and say so.
    expect(server!.output.join('')).toContain('PLAINBASE_TEST_PASSWORD_HASH_COST is 10');
    expect(reply.body).toMatchObject({ key: { name: 'import script', mode: 'live' }, grantedScopes: ['records:read', 'records:create'] });

    const session = await signInOwner(server!.base);
    expect(reply.body.workspaceId).toBe(session['x-baas-workspace']);
    const audit = await call(server!.base, 'GET', '/v1/audit-log?action=key.created', session);
    expect(audit.body.data[0]).toMatchObject({ actor: { type: 'person', name: expect.any(String) }, userAgent: 'plainbase create-key', target: { type: 'key', id: reply.body.key.id } });

    const everything = await cli('--email', OWNER.email, '--name', 'all', '--scopes', 'all', '--mode', 'test');
    expect(everything.stdout).toMatch(/^pb_test_/);
    expect((await me(everything.stdout.trim())).body.grantedScopes).toHaveLength(12);
  });

  it('asks which workspace when the person has several, and takes one by name or id', async () => {
    const session = await signInOwner(server!.base);
    const created = await call(server!.base, 'POST', '/v1/workspaces', session, { name: 'research' });
    expect(created.status).toBe(201);

    const ambiguous = await cli('--email', OWNER.email, '--name', 'k', '--scopes', 'records:read');
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stdout).toBe('');
    expect(ambiguous.stderr).toMatch(/^plainbase: owner@example\.com is in 2 workspaces; name one with --workspace <id>: ws_\w+ "default", ws_\w+ "research"\n$/);

    for (const workspace of ['research', created.body.id]) {
      const made = await cli('--email', OWNER.email, '--name', 'k', '--scopes', 'records:read', '--workspace', workspace);
      expect(made.code, made.stderr).toBe(0);
      expect((await me(made.stdout.trim())).body.workspaceId).toBe(created.body.id);
    }
  });

  it('refuses a wrong password or email alike, an unknown scope, and a scope beyond the person\'s role', async () => {
    const wrongPassword = await cliWith({ PLAINBASE_PASSWORD: 'not the password' }, '', ['--email', OWNER.email, '--name', 'k', '--scopes', 'records:read', '--workspace', 'default']);
    const unknownEmail = await cli('--email', 'nobody@example.com', '--name', 'k', '--scopes', 'records:read');
    for (const refused of [wrongPassword, unknownEmail]) {
      expect([refused.code, refused.stdout, refused.stderr]).toEqual([1, '', 'plainbase: the email or the password is wrong\n']);
    }
    const badScope = await cli('--email', OWNER.email, '--name', 'k', '--scopes', 'records:reed');
    expect(badScope.stderr).toMatch(/^plainbase: --scopes: unknown scope records:reed; the scopes are collections:read, /);
    const missing = await cli('--email', OWNER.email, '--scopes', 'records:read');
    expect(missing.stderr).toMatch(/^plainbase: create-key needs --name/);

    // A viewer of the workspace may hold keys, but only with what a viewer may do.
    const session = await signInOwner(server!.base);
    const workspaceId = session['x-baas-workspace']!;
    const invite = await call(server!.base, 'POST', '/v1/invites', session, { email: 'viewer@example.com', role: 'viewer' });
    const accepted = await call(server!.base, 'POST', `/v1/invites/${invite.body.token}/accept`, {}, { name: 'Vera', password: 'viewer password 1' });
    expect(sessionHeaders(accepted, workspaceId)).toHaveProperty('cookie');
    const beyond = await cliWith({}, 'viewer password 1\n', ['--email', 'viewer@example.com', '--password-stdin', '--name', 'k', '--scopes', 'records:create']);
    expect([beyond.code, beyond.stdout]).toEqual([1, '']);
    expect(beyond.stderr).toMatch(/^plainbase: Your role \(viewer\) cannot grant records:create\.\n$/);
    const allowed = await cliWith({}, 'viewer password 1\n', ['--email', 'viewer@example.com', '--password-stdin', '--name', 'k', '--scopes', 'all']);
    expect((await me(allowed.stdout.trim())).body.grantedScopes).toEqual(['collections:read', 'records:read', 'schemas:read', 'files:read']);
  });

  // Where the password comes from is settled before any database work: one engine says it all
  // (the tests above run the same command on both).
  it.skipIf(engine === 'postgres')('takes the password from standard input, or still from --password with a warning that it was visible to every local user', async () => {
    const fromStdin = await cliWith({}, `${OWNER.password}\n`, ['--email', OWNER.email, '--password-stdin', '--name', 'stdin', '--scopes', 'records:read', '--workspace', 'default']);
    expect(fromStdin.code, fromStdin.stderr).toBe(0);
    expect(fromStdin.stderr).not.toContain('warning');
    expect((await me(fromStdin.stdout.trim())).status).toBe(200);

    const onCommandLine = await cliWith({}, '', ['--email', OWNER.email, '--password', OWNER.password, '--name', 'argv', '--scopes', 'records:read', '--workspace', 'default']);
    expect(onCommandLine.code, onCommandLine.stderr).toBe(0);
    expect(onCommandLine.stderr).toMatch(/^plainbase: warning: --password puts the password on the command line, where every user of this machine can read it \(ps\); use --password-stdin or PLAINBASE_PASSWORD instead\n/);
    expect((await me(onCommandLine.stdout.trim())).status).toBe(200);

    const none = await cliWith({}, '', ['--email', OWNER.email, '--name', 'k', '--scopes', 'records:read']);
    expect([none.code, none.stdout, none.stderr]).toEqual([1, '', 'plainbase: create-key needs the person\'s password: --password-stdin (from standard input) or PLAINBASE_PASSWORD\n']);
    const emptyStdin = await cliWith({}, '\n', ['--email', OWNER.email, '--password-stdin', '--name', 'k', '--scopes', 'records:read']);
    expect(emptyStdin.stderr).toBe('plainbase: --password-stdin read no password from standard input\n');
  });
});
