import { createHash } from 'node:crypto';
import type pg from 'pg';
import { LruMap } from '../lru-map.js';

/**
 * PostgreSQL statements named by their text, for queries that repeat the same text call after
 * call although no one wrote it in advance: a program's list with its filter (the values are
 * parameters, the text is the filter's shape). A named statement is parsed once per connection,
 * and after five runs PostgreSQL keeps one plan for all calls when that plan is no worse than one
 * made for each call's values; from then on a call does no planning at all. A page of records,
 * whose statement carries its guards (remembered collection, guessed key), took PostgreSQL more
 * to plan than to run; named, pages went from 0.36 to 0.56 of the bench's bare baseline.
 *
 * A caller's input decides how many texts there are, and each named statement and its plan stay
 * with the connection that prepared it. So a connection prepares at most
 * STATEMENTS_PER_CONNECTION of them, the first it meets; a text beyond those runs unnamed there,
 * planned per call as every other statement is. The pool retires each connection after
 * CONNECTION_LIFETIME_SECONDS (connect.ts), which frees its statements, so the texts a server
 * prepares follow what its callers send now, not what they sent first.
 */

/**
 * At most this many statements named by text per connection. A page's statement with its plans
 * took about 190 KB of its connection's memory (PostgreSQL 15, pg_backend_memory_contexts), so
 * 32 of them are about 6 MB per connection, 60 MB for the default pool of 10.
 */
export const STATEMENTS_PER_CONNECTION = 32;

/** How long a pooled connection lives before the pool closes it (once it is idle) and opens another. */
export const CONNECTION_LIFETIME_SECONDS = 30 * 60;

/** What every name made here starts with; fixed-name statements (direct-query.ts) do not. */
const PREFIX = 'plainbase_text_';

/** Names of recent texts: a text that repeats is the same string, whose hash V8 keeps. */
const names = new LruMap<string, string>(1000);

/** The statement name of a text: the same for the same text in every process. */
export function statementNameOf(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    name = PREFIX + createHash('sha256').update(text).digest('hex').slice(0, 40);
    names.set(text, name);
  }
  return name;
}

/** A query as pg takes it, with the name it may have. */
interface NamedQuery {
  name?: string;
  text: string;
  values?: unknown[];
}

/**
 * pg's Client, made to prepare at most STATEMENTS_PER_CONNECTION statements named by text
 * (statementNameOf); past them such a query runs unnamed. Other queries pass as they are.
 */
export function statementCappedClient(Client: typeof pg.Client): typeof pg.Client {
  class StatementCappedClient extends Client {
    /** The names by text this connection has prepared or is preparing. */
    private readonly prepared = new Set<string>();

    // pg's query() has many overloads; only a query config object with a name is looked at.
    override query(...args: unknown[]): never {
      const [config] = args;
      if (isNamedByText(config) && !this.prepared.has(config.name)) {
        if (this.prepared.size < STATEMENTS_PER_CONNECTION) this.prepared.add(config.name);
        else args[0] = { text: config.text, values: config.values };
      }
      return (super.query as (...queryArgs: unknown[]) => never)(...args);
    }
  }
  return StatementCappedClient;
}

const isNamedByText = (config: unknown): config is NamedQuery & { name: string } =>
  typeof config === 'object' && config !== null && typeof (config as NamedQuery).name === 'string' && (config as NamedQuery).name!.startsWith(PREFIX);
