import type { FastifyRequest } from 'fastify';
import type { Deps } from '../../../deps.js';
import { AppError } from '../../../errors.js';
import { authenticate, WORKSPACE_HEADER, type AuthContext } from '../../auth.js';
import { sessionTokenOf } from '../../session-cookie.js';
import { EVENTS_ACCESS } from './event-filter.js';

/** How often the credentials behind open streams are checked again. */
export const RECHECK_MS = 1000;

/** An open stream whose caller is checked again while it runs. */
export interface RecheckedStream {
  readonly request: FastifyRequest;
  /** The caller may no longer read events: end the stream, saying why. */
  end(reason: string): void;
  /** The caller as checked now (its request's auth was just replaced); `abilities` tells whether that changed anything. */
  follow(abilities: string): Promise<void>;
}

export interface Rechecks {
  /** Open streams by the credential they were opened with: one check serves them all. */
  byCredential: Map<string, Set<RecheckedStream>>;
  timer: NodeJS.Timeout | null;
  checking: boolean;
}

declare module '../../../services.js' {
  interface Services {
    /** The app's open event streams by credential, checked again together on one timer. */
    streamRechecks: Rechecks;
  }
}

export const noRechecks = (): Rechecks => ({ byCredential: new Map(), timer: null, checking: false });

/**
 * Checks the caller of an open stream every RECHECK_MS, sharing the check between every stream
 * opened with the same credential (the same key secret, or the same session in the same
 * workspace): one statement per credential per interval, however many streams it holds, and
 * one timer per process, however many streams there are. Returns what stops checking it.
 */
export function recheckWhileOpen(deps: Deps, stream: RecheckedStream): () => void {
  const state = deps.services.streamRechecks;
  const credential = credentialOf(deps, stream.request);
  let streams = state.byCredential.get(credential);
  if (!streams) {
    streams = new Set();
    state.byCredential.set(credential, streams);
  }
  streams.add(stream);
  state.timer ??= setInterval(() => void checkAll(deps, state), RECHECK_MS);
  return () => {
    const same = state.byCredential.get(credential);
    if (!same?.delete(stream) || same.size > 0) return;
    state.byCredential.delete(credential);
    if (state.byCredential.size === 0 && state.timer) {
      clearInterval(state.timer);
      state.timer = null;
    }
  };
}

/** What a caller may do, as a string that changes exactly when what it may read could have. */
export function abilitiesOf(auth: AuthContext): string {
  if (auth.key) return JSON.stringify([auth.role, [...auth.key.effective].sort(), auth.key.collections]);
  return JSON.stringify([auth.role]);
}

function credentialOf(deps: Deps, request: FastifyRequest): string {
  const authorization = request.headers.authorization;
  if (authorization !== undefined) return `key ${authorization}`;
  return `session ${sessionTokenOf(deps, request) ?? ''} ${String(request.headers[WORKSPACE_HEADER] ?? '')}`;
}

async function checkAll(deps: Deps, rechecks: Rechecks): Promise<void> {
  // A slow database: the next tick checks again rather than piling checks up.
  if (rechecks.checking) return;
  rechecks.checking = true;
  try {
    await Promise.all([...rechecks.byCredential.values()].map((streams) => checkOne(deps, [...streams])));
  } finally {
    rechecks.checking = false;
  }
}

async function checkOne(deps: Deps, streams: RecheckedStream[]): Promise<void> {
  const first = streams[0];
  if (!first) return;
  try {
    await authenticate(deps, first.request, EVENTS_ACCESS);
  } catch (error) {
    if (error instanceof AppError) for (const stream of streams) stream.end(`${error.code}: ${error.message}`);
    // Anything else (the database briefly away): the next check tries again.
    return;
  }
  const auth = first.request.auth;
  const abilities = abilitiesOf(auth);
  for (const stream of streams) {
    stream.request.auth = auth;
    await stream.follow(abilities);
  }
}
