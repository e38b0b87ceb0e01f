import { isStatementTimedOut } from '../../../db/db-errors.js';
import type { Deps } from '../../../deps.js';
import { AppError, rateLimited } from '../../../errors.js';

/**
 * The time budget of the statements a caller shapes: a filter, a sort, a count (the record list)
 * and an export's filter. Past its budget a statement stops (Dialect.statementTimeout or
 * statementBudgetCheck, through visitRows' timeLimitMs) and the request answers 400
 * INVALID_REQUEST naming the budget; a list without filter, sort or count reads a page of an
 * index and is not budgeted, so the common list pays nothing for this.
 *
 * The budget alone does not protect the other workspaces where a statement holds the process
 * (SQLite runs statements synchronously on the event loop): twelve budgeted statements queued one
 * behind the other would hold it for twelve budgets. So budgeted statements also take turns, in
 * lanes: one lane per workspace for callers with a credential, and one lane for every anonymous
 * caller together (an anonymous caller can read any public collection, so a lane per workspace
 * would not bound them). A lane runs at most `width` statements at once: one where statements
 * hold the process, half the connection pool otherwise (so that no one lane takes the whole pool).
 * Where statements hold the process, a lane also rests after a long statement for as long as it
 * ran, so at least half of the time goes to everybody else's requests, whose handlers take several
 * statements each. A statement that waits for its lane longer than twice its budget is
 * not run: the request answers 429 RATE_LIMITED.
 */
export interface QueryBudget {
  /** Whether the query is one the caller shaped (filter, sort, count), so budgeted: its statement must then carry Dialect.statementBudgetCheck. */
  applies: boolean;
  /** Runs one budgeted read in its lane (or as it is when the budget does not apply), with its time limit. */
  run<T>(read: (timeLimitMs: number | undefined) => Promise<T>): Promise<T>;
}

export type QueryCaller = 'anonymous' | 'credentialed';

/** The budget for a caller's query in a workspace; `applies`: whether the caller shaped it. */
export function queryBudget(deps: Deps, workspaceId: string, caller: QueryCaller, applies: boolean): QueryBudget {
  if (!applies) return { applies, run: (read) => read(undefined) };
  const anonymous = caller === 'anonymous';
  const ms = anonymous ? deps.config.publicQueryTimeMs : deps.config.queryTimeMs;
  const setting = anonymous ? 'PLAINBASE_PUBLIC_QUERY_TIME_MS' : 'PLAINBASE_QUERY_TIME_MS';
  const lane = laneOf(deps, anonymous ? 'anonymous' : `workspace:${workspaceId}`);
  return {
    applies,
    run: async (read) => {
      const release = await lane.enter(2 * ms, anonymous);
      const started = performance.now();
      try {
        return await read(ms);
      } catch (error) {
        if (isStatementTimedOut(error)) throw overBudget(ms, setting, anonymous);
        throw error;
      } finally {
        // Rest at most a budget: a statement run under a larger one (the setting was just lowered) must not close the lane for long.
        release(Math.min(performance.now() - started, ms));
      }
    },
  };
}

function overBudget(ms: number, setting: string, anonymous: boolean): AppError {
  const advice = anonymous
    ? 'narrow the filter, or ask the collection\'s owner for an index on the fields it filters or sorts on'
    : 'add an index on the fields it filters or sorts on (docs/queries.md, Indexes), or narrow the filter';
  return new AppError('INVALID_REQUEST', `The query took longer than its time budget of ${ms} ms (${setting}) and was stopped: ${advice}.`, { limit: ms, setting });
}

// ---------------------------------------------------------------------------------------------
// Lanes

export interface Lane {
  /** Resolves once the statement may run, with what to call when it has; rejects with a 429 after `maxWaitMs`. */
  enter(maxWaitMs: number, anonymous: boolean): Promise<(ranMs: number) => void>;
}

declare module '../../../services.js' {
  interface Services {
    /** The app's query lanes by name: they share its database connection or pool. */
    queryLanes: Map<string, Lane>;
  }
}

function laneOf(deps: Deps, name: string): Lane {
  const lanes = deps.services.queryLanes;
  let lane = lanes.get(name);
  if (!lane) {
    const holdsProcess = deps.dialect.readsSynchronously;
    const width = holdsProcess ? 1 : Math.max(1, Math.floor(deps.config.databasePoolSize / 2));
    const made = makeLane(width, holdsProcess, () => {
      if (lanes.get(name) === made) lanes.delete(name);
    });
    lanes.set(name, made);
    lane = made;
  }
  return lane;
}

/**
 * Statements shorter than this leave no rest: between two of them the rest of the server waits no
 * longer than that anyway, and a program polling with a cheap filter must not wait twice as long
 * (measured: a filtered page of 8 ms took 16 ms one after another with a rest after every statement).
 */
const REST_AFTER_MS = 50;

function makeLane(width: number, restsAfterLong: boolean, onIdle: () => void): Lane {
  let running = 0;
  let restingUntil = 0;
  let restTimer: NodeJS.Timeout | null = null;
  const waiting: (() => void)[] = [];

  const pump = () => {
    while (running < width && waiting.length > 0 && performance.now() >= restingUntil) {
      running += 1;
      waiting.shift()!();
    }
    if (waiting.length > 0 && running < width && restTimer === null) {
      restTimer = setTimeout(() => {
        restTimer = null;
        pump();
      }, Math.max(1, restingUntil - performance.now()));
    }
    if (running === 0 && waiting.length === 0 && restTimer === null && performance.now() >= restingUntil) onIdle();
  };

  const release = (ranMs: number) => {
    running -= 1;
    if (restsAfterLong && ranMs >= REST_AFTER_MS) restingUntil = Math.max(restingUntil, performance.now() + ranMs);
    // Not now: what the statement's end let through (answers, other requests' next steps) goes first.
    setImmediate(pump);
  };

  return {
    enter: (maxWaitMs, anonymous) => {
      if (running < width && waiting.length === 0 && performance.now() >= restingUntil) {
        running += 1;
        return Promise.resolve(release);
      }
      return new Promise((resolve, reject) => {
        const start = () => {
          clearTimeout(giveUp);
          resolve(release);
        };
        const giveUp = setTimeout(() => {
          waiting.splice(waiting.indexOf(start), 1);
          reject(laneBusy(maxWaitMs, anonymous));
          pump();
        }, maxWaitMs);
        waiting.push(start);
        pump();
      });
    },
  };
}

function laneBusy(waitedMs: number, anonymous: boolean): AppError {
  const whose = anonymous ? 'anonymous callers' : 'this workspace';
  return rateLimited(
    Math.max(1, waitedMs / 1000),
    `Too many filtered, sorted or counted queries of ${whose} are running; this one waited ${waitedMs} ms for its turn. Try again shortly.`,
  );
}
