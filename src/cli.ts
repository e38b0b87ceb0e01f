import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import dotenv from 'dotenv';
import { z } from 'zod';
import { ConfigError, loadConfig, prepareDirectories, unknownVariables, type Config } from './config.js';
import { AppError } from './errors.js';

const HELP = `Usage: plainbase <command> [options]

Commands:
  serve                    Start the service: migrate the database, then listen (what \`npm start\` runs)
  migrate                  Bring the database schema up to date, then exit (what \`npm run migrate\` runs)
  create-owner             Create a person who owns a new workspace, then exit
      --email <email>      their email (required)
      --password <pw>      their password, at least 10 characters (required; or set
                           PLAINBASE_NEW_OWNER_PASSWORD to keep it out of the shell history)
      --name <name>        their name (default: the part of the email before @)
      --workspace <name>   the workspace's name (default: "default")
  listen                   Forward a server's events to a receiver on this machine, signed as
                           webhook deliveries are (see docs/events.md); runs until Ctrl-C
      --url <url>          the Plainbase server (default: http://127.0.0.1:8080)
      --key <key>          an API key with read scopes (or set PLAINBASE_KEY)
      --forward-to <url>   where to POST each event, like http://localhost:3000/hook
      --print              write each event as a JSON line instead of forwarding it
      --types <list>       only these event types, comma-separated
      --collections <list> only these collections (ids or names), comma-separated
      --since <evt_…>      start after this event instead of from now
      --secret <whsec_…>   sign with this secret (default: a new one, printed at start)

Options:
  -h, --help               Show this help
  -v, --version            Show the version

Configuration comes from PLAINBASE_* environment variables and a .env file in the current
folder; every command reads the same settings. The README lists them all.
`;

/** Thrown for a mistake in the command line; printed as one line like any other. */
class UsageError extends Error {}

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
      name: { type: 'string' },
      workspace: { type: 'string' },
      url: { type: 'string' },
      key: { type: 'string' },
      'forward-to': { type: 'string' },
      print: { type: 'boolean' },
      types: { type: 'string' },
      collections: { type: 'string' },
      since: { type: 'string' },
      secret: { type: 'string' },
    },
  });
  const command = positionals[0];
  if (values.version) {
    const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    process.stdout.write(`plainbase ${manifest.version}\n`);
    return;
  }
  if (values.help || command === undefined || command === 'help') {
    process.stdout.write(HELP);
    return;
  }
  if (!['serve', 'migrate', 'create-owner', 'listen'].includes(command)) throw new UsageError(`unknown command "${command}"; run plainbase --help`);
  if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}"; run plainbase --help`);
  const listenOptions = LISTEN_OPTIONS.filter((option) => values[option] !== undefined);
  if (command !== 'listen' && listenOptions.length > 0) throw new UsageError(`--${listenOptions[0]} belongs to listen, not ${command}`);
  const ownerOptions = (['email', 'password', 'name', 'workspace'] as const).filter((option) => values[option] !== undefined);
  if (command !== 'create-owner' && ownerOptions.length > 0) throw new UsageError(`--${ownerOptions[0]} belongs to create-owner, not ${command}`);
  // A client of a server somewhere: none of the server's own settings apply.
  if (command === 'listen') return listenCommand(values);

  // Values already in the environment win over the .env file.
  dotenv.config({ quiet: true });

  let owner: { email: string; password: string; name?: string; workspaceName?: string } | null = null;
  if (command === 'create-owner') {
    const password = values.password ?? process.env.PLAINBASE_NEW_OWNER_PASSWORD;
    if (!values.email) throw new UsageError('create-owner needs --email');
    if (!z.email().safeParse(values.email).success) throw new UsageError(`--email must be an email address (got ${JSON.stringify(values.email)})`);
    if (!password) throw new UsageError('create-owner needs --password (or PLAINBASE_NEW_OWNER_PASSWORD)');
    owner = { email: values.email, password, name: values.name, workspaceName: values.workspace };
  }

  const config = loadConfig(process.env);
  for (const name of unknownVariables(process.env)) {
    process.stderr.write(`plainbase: warning: ${name} is not a Plainbase setting and is ignored (a typo?)\n`);
  }
  prepareDirectories(config);

  if (command === 'migrate') return migrate(config);
  if (owner) return createOwnerCommand(config, owner);
  // Imported here so that --help and bad settings answer without loading the whole app.
  const { serve } = await import('./main.js');
  return serve(config);
}

const LISTEN_OPTIONS = ['url', 'key', 'forward-to', 'print', 'types', 'collections', 'since', 'secret'] as const;

async function listenCommand(values: Partial<Record<(typeof LISTEN_OPTIONS)[number], string | boolean>>): Promise<void> {
  const key = (values.key as string | undefined) ?? process.env.PLAINBASE_KEY;
  if (!key) throw new UsageError('listen needs --key (or PLAINBASE_KEY)');
  const print = values.print === true;
  const forwardTo = values['forward-to'] as string | undefined;
  if (!print && !forwardTo) throw new UsageError('listen needs --forward-to <url>, or --print');
  if (print && forwardTo) throw new UsageError('listen takes --forward-to or --print, not both');
  const url = (values.url as string | undefined) ?? 'http://127.0.0.1:8080';
  for (const [option, value] of [['url', url], ['forward-to', forwardTo]] as const) {
    if (value !== undefined && !/^https?:\/\//.test(value)) throw new UsageError(`--${option} must be an http:// or https:// URL (got ${JSON.stringify(value)})`);
  }
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
      secret: values.secret as string | undefined,
      signal: stop.signal,
    });
  } catch (error) {
    if (error instanceof ListenError) throw new UsageError(error.message);
    throw error;
  }
}

async function migrate(config: Config): Promise<void> {
  const { connectStorage } = await import('./db/connect.js');
  const { migrateToLatest } = await import('./db/migrate.js');
  const storage = await connectStorage(config.database);
  try {
    const applied = await migrateToLatest(storage.db);
    process.stdout.write(applied.length ? `applied ${applied.length} migration(s): ${applied.join(', ')}\n` : 'the database is up to date\n');
  } finally {
    await storage.close();
  }
}

async function createOwnerCommand(config: Config, input: { email: string; password: string; name?: string; workspaceName?: string }): Promise<void> {
  const { connectStorage } = await import('./db/connect.js');
  const { migrateToLatest } = await import('./db/migrate.js');
  const { createOwner } = await import('./modules/people/first-owner.js');
  const { depsFor } = await import('./main.js');
  const storage = await connectStorage(config.database);
  try {
    await migrateToLatest(storage.db);
    const deps = depsFor(config, storage);
    const { person, workspace } = await createOwner(deps, input);
    process.stdout.write(`created ${person.email} (${person.id}), owner of workspace "${workspace.name}" (${workspace.id})\n`);
  } catch (error) {
    if (storage.dialect.isUniqueViolation(error)) throw new UsageError(`a person with the email ${input.email} already exists`);
    throw error;
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
