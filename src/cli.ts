import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import dotenv from 'dotenv';
import { z } from 'zod';
import { ConfigError, loadConfig, prepareDirectories, unknownVariables, type Config } from './config.js';
import { roleAllows, SCOPES, type Scope } from './abilities.js';
import { AppError } from './errors.js';
import { PACKAGE_ROOT } from './package-root.js';

const HELP = `Usage: plainbase <command> [options]

Commands:
  serve                    Start the service: migrate the database, then listen (what \`npm start\` runs)
  migrate                  Bring the database schema up to date, then exit (what \`npm run migrate\` runs)
  create-owner             Create a person who owns a new workspace, then exit
      --email <email>      their email (required)
      --password-stdin     read their password (at least 10 characters) from the first line of
                           standard input; or set PLAINBASE_NEW_OWNER_PASSWORD
      --name <name>        their name (default: the part of the email before @)
      --workspace <name>   the workspace's name (default: "default")
  create-key               Create an API key of a person, print its secret (shown this once), then exit
      --email <email>      the person (required)
      --password-stdin     read their password from the first line of standard input; or set
                           PLAINBASE_PASSWORD
      --name <name>        the key's name (required)
      --scopes <list>      comma-separated scopes, like records:read,records:create (required;
                           "all" for every scope the person's role allows)
      --workspace <id>     the workspace, by id or name (default: the person's only workspace)
      --mode <mode>        live (default) or test: the key's prefix
  backup                   Write a backup of the database and its files to one archive, then exit;
                           the service may keep running (see docs/backups.md)
      --out <file>         where to write it (default: backups/plainbase-<time>.tar in the data folder)
  restore <file>           Fill an empty database (and the file store) from a backup, then exit;
                           webhooks stay off until a person turns them on
      --deliver            leave the webhooks on, so held deliveries go out at once
  reset-password           Set a new password for a person who forgot theirs, end all their
                           sessions, then exit (on the server, like create-owner)
      --email <email>      the person (required)
      --password-stdin     read the new password (at least 10 characters) from the first line
                           of standard input; or set PLAINBASE_PASSWORD
  listen                   Forward a server's events to a receiver on this machine, signed as
                           webhook deliveries are (see docs/events.md); runs until Ctrl-C
      --url <url>          the Plainbase server (default: http://127.0.0.1 on PLAINBASE_PORT,
                           8080 when unset)
      --key-stdin          read the API key (with read scopes) from standard input; or set
                           PLAINBASE_KEY
      --forward-to <url>   where to POST each event, like http://localhost:3000/hook
      --print              write each event as a JSON line instead of forwarding it
      --types <list>       only these event types, comma-separated
      --collections <list> only these collections (ids or names), comma-separated
      --since <evt_…>      start after this event instead of from now
      --secret <whsec_…>   sign with this secret (default: a new one, printed at start); better:
                           set PLAINBASE_LISTEN_SECRET

Options:
  -h, --help               Show this help
  -v, --version            Show the version

--password <pw> and --key <key> still work, but a secret on the command line can be read by
every user of this machine (ps): they print a warning.

Configuration comes from PLAINBASE_* environment variables and a .env file in the current
folder; every command reads the same settings. The README lists them all.
`;

/** Thrown for a mistake in the command line; printed as one line like any other. */
class UsageError extends Error {}

/** The options each command takes; any other is a mistake named as such. */
const COMMAND_OPTIONS = {
  serve: [],
  migrate: [],
  'create-owner': ['email', 'password', 'password-stdin', 'name', 'workspace'],
  'create-key': ['email', 'password', 'password-stdin', 'name', 'workspace', 'scopes', 'mode'],
  backup: ['out'],
  restore: ['deliver'],
  'reset-password': ['email', 'password', 'password-stdin'],
  listen: ['url', 'key', 'key-stdin', 'forward-to', 'print', 'types', 'collections', 'since', 'secret'],
} as const;

type Command = keyof typeof COMMAND_OPTIONS;

interface KeyRequest {
  email: string;
  password: string;
  name: string;
  scopes: string[] | 'all';
  workspace?: string;
  mode: 'live' | 'test';
}

/** The create-key options, checked before anything is opened. */
function keyRequest(values: { email?: string; name?: string; scopes?: string; workspace?: string; mode?: string }, password: string | undefined): KeyRequest {
  if (!values.email) throw new UsageError('create-key needs --email (the person whose key it is)');
  if (!password) throw new UsageError('create-key needs the person\'s password: --password-stdin (from standard input) or PLAINBASE_PASSWORD');
  if (!values.name?.trim()) throw new UsageError('create-key needs --name (what the key is for, like "import script")');
  if (!values.scopes) throw new UsageError(`create-key needs --scopes, comma-separated: ${SCOPES.join(',')} (or all)`);
  const scopes = values.scopes.trim() === 'all' ? 'all' : values.scopes.split(',').map((scope) => scope.trim()).filter(Boolean);
  const unknown = scopes === 'all' ? [] : scopes.filter((scope) => !(SCOPES as readonly string[]).includes(scope));
  if (unknown.length || scopes.length === 0) throw new UsageError(`--scopes: ${unknown.length ? `unknown scope ${unknown.join(', ')}` : 'none given'}; the scopes are ${SCOPES.join(', ')}`);
  if (values.mode !== undefined && values.mode !== 'live' && values.mode !== 'test') throw new UsageError(`--mode must be live or test (got ${JSON.stringify(values.mode)})`);
  return { email: values.email, password, name: values.name.trim(), scopes, workspace: values.workspace, mode: (values.mode ?? 'live') as 'live' | 'test' };
}

/**
 * Prints one line and exits non-zero: a person reads this, not a stack trace. Messages that
 * span lines (some driver errors do) are joined so that the one line holds.
 */
function fail(message: string): never {
  process.stderr.write(`plainbase: ${message.replace(/\s*\n\s*/g, ' ').trim()}\n`);
  process.exit(1);
}

async function run(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
      email: { type: 'string' },
      password: { type: 'string' },
      'password-stdin': { type: 'boolean' },
      name: { type: 'string' },
      workspace: { type: 'string' },
      scopes: { type: 'string' },
      mode: { type: 'string' },
      url: { type: 'string' },
      key: { type: 'string' },
      'key-stdin': { type: 'boolean' },
      'forward-to': { type: 'string' },
      print: { type: 'boolean' },
      types: { type: 'string' },
      collections: { type: 'string' },
      since: { type: 'string' },
      secret: { type: 'string' },
      out: { type: 'string' },
      deliver: { type: 'boolean' },
    },
  });
  const command = positionals[0];
  if (values.version) {
    const manifest = JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string };
    process.stdout.write(`plainbase ${manifest.version}\n`);
    return;
  }
  if (values.help || command === undefined || command === 'help') {
    process.stdout.write(HELP);
    return;
  }
  if (!Object.hasOwn(COMMAND_OPTIONS, command)) throw new UsageError(`unknown command "${command}"; run plainbase --help`);
  // Only restore takes an argument: the archive.
  const argumentsTaken = command === 'restore' ? 2 : 1;
  if (command === 'restore' && positionals.length < 2) throw new UsageError('restore needs the backup file: plainbase restore <file>');
  if (positionals.length > argumentsTaken) throw new UsageError(`unexpected argument "${positionals[argumentsTaken]}"; run plainbase --help`);
  const allowed: readonly string[] = COMMAND_OPTIONS[command as Command];
  const misplaced = Object.keys(values).find((option) => !['help', 'version'].includes(option) && !allowed.includes(option));
  if (misplaced) {
    const owners = (Object.keys(COMMAND_OPTIONS) as Command[]).filter((name) => COMMAND_OPTIONS[name].includes(misplaced as never));
    throw new UsageError(`--${misplaced} belongs to ${owners.join(' and ')}, not ${command}`);
  }
  // A client of a server somewhere: none of the server's own settings apply.
  if (command === 'listen') return listenCommand(values);

  // Values already in the environment win over the .env file.
  dotenv.config({ quiet: true });

  let owner: { email: string; password: string; name?: string; workspaceName?: string } | null = null;
  // A secret given as --password is warned about once the command is about to use it.
  let exposed: string | null = null;
  if (command === 'create-owner') {
    const password = await readSecret({ flag: 'password', given: values.password, fromStdin: values['password-stdin'], variable: 'PLAINBASE_NEW_OWNER_PASSWORD' });
    if (!values.email) throw new UsageError('create-owner needs --email');
    if (!z.email().safeParse(values.email).success) throw new UsageError(`--email must be an email address (got ${JSON.stringify(values.email)})`);
    if (!password.value) throw new UsageError('create-owner needs a password: --password-stdin (from standard input) or PLAINBASE_NEW_OWNER_PASSWORD');
    owner = { email: values.email, password: password.value, name: values.name, workspaceName: values.workspace };
    exposed = password.warning;
  }
  let key: KeyRequest | null = null;
  if (command === 'create-key') {
    const password = await readSecret({ flag: 'password', given: values.password, fromStdin: values['password-stdin'], variable: 'PLAINBASE_PASSWORD' });
    key = keyRequest(values, password.value);
    exposed = password.warning;
  }

  let reset: { email: string; password: string } | null = null;
  if (command === 'reset-password') {
    const password = await readSecret({ flag: 'password', given: values.password, fromStdin: values['password-stdin'], variable: 'PLAINBASE_PASSWORD' });
    if (!values.email) throw new UsageError('reset-password needs --email (the person whose password it is)');
    if (!password.value) throw new UsageError('reset-password needs the new password: --password-stdin (from standard input) or PLAINBASE_PASSWORD');
    reset = { email: values.email, password: password.value };
    exposed = password.warning;
  }

  const config = loadConfig(process.env);
  for (const name of unknownVariables(process.env)) {
    process.stderr.write(`plainbase: warning: ${name} is not a Plainbase setting and is ignored (a typo?)\n`);
  }
  prepareDirectories(config);
  if (exposed) process.stderr.write(exposed);

  if (command === 'migrate') return migrate(config);
  if (command === 'backup') return backupCommand(config, values.out);
  if (command === 'restore') return restoreCommand(config, positionals[1]!, values.deliver === true);
  if (owner) return createOwnerCommand(config, owner);
  if (key) return createKeyCommand(config, key);
  if (reset) return resetPasswordCommand(config, reset);
  // Imported here so that --help and bad settings answer without loading the whole app.
  const { serve } = await import('./main.js');
  return serve(config);
}

async function listenCommand(values: Partial<Record<(typeof COMMAND_OPTIONS)['listen'][number], string | boolean>>): Promise<void> {
  const secret = await readSecret({ flag: 'key', given: values.key as string | undefined, fromStdin: values['key-stdin'] === true, variable: 'PLAINBASE_KEY' });
  const key = secret.value;
  if (!key) throw new UsageError('listen needs an API key: --key-stdin (from standard input) or PLAINBASE_KEY');
  const print = values.print === true;
  const forwardTo = values['forward-to'] as string | undefined;
  if (!print && !forwardTo) throw new UsageError('listen needs --forward-to <url>, or --print');
  if (print && forwardTo) throw new UsageError('listen takes --forward-to or --print, not both');
  const url = (values.url as string | undefined) ?? `http://127.0.0.1:${localPort()}`;
  for (const [option, value] of [['url', url], ['forward-to', forwardTo]] as const) {
    if (value !== undefined && !/^https?:\/\//.test(value)) throw new UsageError(`--${option} must be an http:// or https:// URL (got ${JSON.stringify(value)})`);
  }
  const signing = await readSecret({ flag: 'secret', given: values.secret as string | undefined, fromStdin: null, variable: 'PLAINBASE_LISTEN_SECRET' });
  for (const warning of [secret.warning, signing.warning]) if (warning) process.stderr.write(warning);
  const { listen, ListenError } = await import('./listen.js');
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  process.once('SIGTERM', () => stop.abort());
  try {
    await listen({
      url,
      key,
      forwardTo: forwardTo ?? null,
      print,
      types: values.types as string | undefined,
      collections: values.collections as string | undefined,
      since: values.since as string | undefined,
      secret: signing.value,
      signal: stop.signal,
    });
  } catch (error) {
    if (error instanceof ListenError) throw new UsageError(error.message);
    throw error;
  }
}

/**
 * The port of a server on this machine, for listen's default --url: PLAINBASE_PORT, as the
 * server itself reads it (the environment, then a .env file of this folder), 8080 when unset.
 */
function localPort(): number {
  const setting = process.env.PLAINBASE_PORT || dotenv.config({ quiet: true, processEnv: {} }).parsed?.PLAINBASE_PORT;
  if (setting === undefined || setting === '') return 8080;
  const port = Number(setting);
  if (!/^\d+$/.test(setting) || port < 1 || port > 65535) throw new UsageError(`PLAINBASE_PORT must be a port number from 1 to 65535 (got ${JSON.stringify(setting)}); or pass --url`);
  return port;
}

/**
 * A secret the command needs, from the first line of standard input (`--<flag>-stdin`), the
 * environment, or, still accepted, the command line: there every local user can read it (`ps`,
 * /proc/<pid>/cmdline), so that way comes with a warning to print. Standard input and the
 * environment of a process are this user's alone.
 */
/** A secret from standard input (`fromStdin`; null where the option has no -stdin form), the command line (warned) or the environment. */
async function readSecret(source: { flag: string; given: string | undefined; fromStdin: boolean | undefined | null; variable: string }): Promise<{ value: string | undefined; warning: string | null }> {
  const { flag, given, fromStdin, variable } = source;
  if (given !== undefined && fromStdin) throw new UsageError(`--${flag} and --${flag}-stdin both give the ${flag}; use one`);
  if (fromStdin) {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    const value = Buffer.concat(chunks).toString('utf8').split(/\r?\n/, 1)[0]!;
    if (!value) throw new UsageError(`--${flag}-stdin read no ${flag} from standard input`);
    return { value, warning: null };
  }
  if (given !== undefined) {
    const safe = fromStdin === null ? variable : `--${flag}-stdin or ${variable}`;
    return { value: given, warning: `plainbase: warning: --${flag} puts the ${flag} on the command line, where every user of this machine can read it (ps); use ${safe} instead\n` };
  }
  return { value: process.env[variable] || undefined, warning: null };
}

async function migrate(config: Config): Promise<void> {
  const { connectStorage } = await import('./db/connect.js');
  const { migrateStorage } = await import('./db/migrate.js');
  const storage = await connectStorage(config.database, { checkPooler: true });
  try {
    const applied = await migrateStorage(storage);
    process.stdout.write(applied.length ? `applied ${applied.length} migration(s): ${applied.join(', ')}\n` : 'the database is up to date\n');
  } finally {
    await storage.close();
  }
}

/**
 * `plainbase backup`: one archive of the database (sessions left out) and every file it names,
 * taken from a snapshot while the service goes on (modules/backups/write-backup.ts). The archive's
 * path goes to stdout, the summary to stderr.
 */
async function backupCommand(config: Config, out: string | undefined): Promise<void> {
  const { connectStorage } = await import('./db/connect.js');
  const { makeFileStore } = await import('./storage/store-for.js');
  const { writeBackup, BackupError } = await import('./modules/backups/write-backup.js');
  if (out !== undefined && !out.trim()) throw new UsageError('--out needs a file name');
  const { backupName } = await import('./modules/backups/backup-runs.js');
  const now = new Date();
  // The service's own name and folder for backups, so its list and its PLAINBASE_BACKUP_KEEP count this one too.
  const file = out ?? path.join(config.dataDir, 'backups', backupName(now));
  // Only the folder this makes is the service's own (0700); a folder named with --out keeps its mode.
  mkdirSync(path.dirname(path.resolve(file)), { recursive: true, mode: 0o700 });
  const storage = await connectStorage(config.database, { checkPooler: true });
  const store = makeFileStore(config);
  try {
    const { manifest, bytes } = await writeBackup(storage, store, file, now);
    const rows = Object.values(manifest.tables).reduce((sum, table) => sum + table.rows, 0);
    process.stdout.write(`${file}\n`);
    process.stderr.write(`backed up ${rows} rows of ${Object.keys(manifest.tables).length} tables and ${manifest.files.length} files (${bytes} bytes), at migration ${manifest.migrations.at(-1)}\n`);
  } catch (error) {
    if (error instanceof BackupError) throw new UsageError(error.message);
    throw error;
  } finally {
    await store.close();
    await storage.close();
  }
}

/** `plainbase restore <file>`: an empty database filled from a backup (modules/backups/restore-backup.ts). */
async function restoreCommand(config: Config, archive: string, deliver: boolean): Promise<void> {
  const { connectStorage } = await import('./db/connect.js');
  const { makeFileStore } = await import('./storage/store-for.js');
  const { restoreBackup, RestoreError } = await import('./modules/backups/restore-backup.js');
  const storage = await connectStorage(config.database, { checkPooler: true });
  const store = makeFileStore(config);
  try {
    const { manifest, heldWebhooks } = await restoreBackup(storage, store, archive, { workDir: config.dataDir, deliver, now: new Date() });
    const rows = Object.values(manifest.tables).reduce((sum, table) => sum + table.rows, 0);
    const held = heldWebhooks ? `; ${heldWebhooks} webhook(s) are off until someone turns them on (their deliveries are held)` : '';
    process.stdout.write(`restored ${rows} rows and ${manifest.files.length} files from ${archive} (taken ${manifest.createdAt} on ${manifest.engine})${held}\n`);
  } catch (error) {
    if (error instanceof RestoreError) throw new UsageError(error.message);
    throw error;
  } finally {
    await store.close();
    await storage.close();
  }
}

async function createOwnerCommand(config: Config, input: { email: string; password: string; name?: string; workspaceName?: string }): Promise<void> {
  const { connectStorage } = await import('./db/connect.js');
  const { isUniqueViolation } = await import('./db/db-errors.js');
  const { migrateStorage } = await import('./db/migrate.js');
  const { createOwner } = await import('./modules/setup/first-owner.js');
  const { depsFor } = await import('./main.js');
  const storage = await connectStorage(config.database, { checkPooler: true });
  try {
    await migrateStorage(storage);
    const deps = depsFor(config, storage);
    const { person, workspace } = await createOwner(deps, input);
    process.stdout.write(`created ${person.email} (${person.id}), owner of workspace "${workspace.name}" (${workspace.id})\n`);
  } catch (error) {
    if (isUniqueViolation(error)) throw new UsageError(`a person with the email ${input.email} already exists`);
    throw error;
  } finally {
    await storage.close();
  }
}

/** A new password for a person, on the server (docs/operations.md, "A forgotten owner password"). */
async function resetPasswordCommand(config: Config, input: { email: string; password: string }): Promise<void> {
  const { connectStorage } = await import('./db/connect.js');
  const { migrateStorage } = await import('./db/migrate.js');
  const { resetPassword } = await import('./modules/sessions/reset-password.js');
  const { depsFor } = await import('./main.js');
  const storage = await connectStorage(config.database, { checkPooler: true });
  try {
    await migrateStorage(storage);
    const done = await resetPassword(depsFor(config, storage), input.email, input.password);
    process.stdout.write(`set a new password for ${done.email} (${done.personId}); ${done.sessionsEnded} session(s) ended\n`);
  } finally {
    await storage.close();
  }
}

/**
 * A key for a person, as if they had signed in and created it in the dashboard: their password is
 * checked, the scopes must be within their role in the workspace, and the audit log records it as
 * theirs. Only the secret goes to stdout, so that `KEY=$(plainbase create-key …)` captures it.
 */
async function createKeyCommand(config: Config, input: KeyRequest): Promise<void> {
  const { connectStorage } = await import('./db/connect.js');
  const { migrateStorage } = await import('./db/migrate.js');
  const { findPersonByEmail, normaliseEmail } = await import('./modules/people/people.js');
  const { decoyPasswordHash, verifyPassword } = await import('./modules/people/password.js');
  const { listWorkspaces } = await import('./modules/workspaces/workspaces.js');
  const { createKey } = await import('./modules/keys/keys.js');
  const { depsFor } = await import('./main.js');
  const storage = await connectStorage(config.database, { checkPooler: true });
  try {
    await migrateStorage(storage);
    const deps = depsFor(config, storage);
    const person = await findPersonByEmail(deps.db, normaliseEmail(input.email));
    // The same work and the same answer for an unknown email and a wrong password.
    const matches = await verifyPassword(input.password, person?.password_hash ?? (await decoyPasswordHash(config.passwordHashCost)));
    if (!person || !matches) throw new UsageError('the email or the password is wrong');

    const workspaces = await listWorkspaces(deps.db, person.id);
    const chosen = input.workspace === undefined ? workspaces : workspaces.filter((w) => w.id === input.workspace || w.name === input.workspace);
    const listed = workspaces.map((w) => `${w.id} "${w.name}"`).join(', ');
    if (workspaces.length === 0) throw new UsageError(`${person.email} is a member of no workspace`);
    if (chosen.length === 0) throw new UsageError(`${person.email} has no workspace ${JSON.stringify(input.workspace)}; theirs: ${listed}`);
    if (chosen.length > 1) throw new UsageError(`${person.email} is in ${chosen.length} workspaces${input.workspace ? ` named ${JSON.stringify(input.workspace)}` : ''}; name one with --workspace <id>: ${listed}`);
    const workspace = chosen[0]!;

    const scopes = input.scopes === 'all' ? SCOPES.filter((scope) => roleAllows(workspace.role, scope)) : (input.scopes as Scope[]);
    const { key, secret } = await createKey(
      deps,
      {
        workspaceId: workspace.id,
        personId: person.id,
        role: workspace.role,
        actor: { type: 'person', id: person.id, name: person.name },
        meta: { ip: null, userAgent: 'plainbase create-key', requestId: null },
        managesAll: roleAllows(workspace.role, 'keys:manage'),
      },
      { name: input.name, scopes, mode: input.mode },
    );
    process.stdout.write(`${secret}\n`);
    process.stderr.write(`created key ${key.id} "${key.name}" of ${person.email} in workspace ${workspace.id} "${workspace.name}" (${scopes.join(', ')}); its secret above is shown this once\n`);
  } finally {
    await storage.close();
  }
}

run(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof AppError || error instanceof UsageError) fail(error.message);
  const code = error instanceof Error && 'code' in error ? String(error.code) : '';
  if (code.startsWith('ERR_PARSE_ARGS')) fail(`${(error as Error).message.split('. ')[0]}; run plainbase --help`);
  if (code === 'EADDRINUSE') fail(`PLAINBASE_PORT: the address is already in use; another process listens there (${(error as Error).message})`);
  if (code === 'EACCES') fail(`PLAINBASE_PORT: not allowed to listen there; ports below 1024 need privileges (${(error as Error).message})`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') fail(`PLAINBASE_HOST: cannot listen on that address (${(error as Error).message})`);
  fail(error instanceof Error ? error.message : String(error));
});
