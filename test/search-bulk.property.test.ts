import fc from 'fast-check';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { buildWaitingSearchIndexes } from '../src/modules/search/search-builds.js';
import { inNewWorkspace, signedInOwner, type Client } from './support/client.js';
import { startTestApp, type TestApp } from './support/harness.js';

/**
 * Search and changes by filter give the same answers on SQLite and PostgreSQL, for random
 * records and random requests, and the answers a model in this file gives where docs/queries.md
 * and docs/bulk-changes.md say what they must be. One run, on each engine side by side:
 *
 *   1. a collection searching data.title and data.body gets some records (indexed as written);
 *   2. more records, then other searchFields: ?search= answers 409 until the background build
 *      has run, then answers from every record;
 *   3. a bulk-update (dry run, then for real) with a random filter and merge patch;
 *   4. a bulk-delete (dry run, then for real) with another random filter;
 *
 * with random searches after steps 1, 2, 3 and 4 (and in the trash after 4). The same-named
 * collection of a second workspace holds the same records and must come out untouched.
 *
 * Search results are compared as sets of records (the ranking may differ by engine). The model
 * of search gives two sets: the records that must match (every term found in one field's words,
 * phrases as consecutive words, with words compared lower-cased) and those that may (every word of
 * every term somewhere in the record, adjacency aside, accents composed or not): the docs do not
 * say whether a phrase may run from one field into the next, nor how a word with a combining mark
 * compares with its composed form.
 */
const RUNS = 30;
const SEED = 20261129;

// ---- Records ------------------------------------------------------------------------------

/** Words of the searched text: mixed case, accents (composed, and one decomposed), digits. */
const WORDS = ['garden', 'Garden', 'GARDEN', 'café', 'CAFÉ', 'cafe', 'école', 'École', 'e\u0301cole', 'fox', 'Foxes', 'naïve', 'Ωmega', 'ωmega', 'a1', '42', 'brown', 'tulip'];
/** ASCII punctuation and spaces between them: every one separates words on both engines. */
const SEPARATORS = [' ', '  ', ', ', '-', '.', '!', ' (', ') ', "'", '@', '/', ':', '_', '\t', '\n', ' & ', '"', '$', '+'];

const word = fc.constantFrom(...WORDS);
const text = fc.array(fc.tuple(word, fc.constantFrom(...SEPARATORS)), { maxLength: 6 }).map((parts) => parts.map(([w, sep]) => w + sep).join(''));
const tags = fc.array(fc.oneof({ weight: 4, arbitrary: word }, { weight: 1, arbitrary: fc.constantFrom(7, 2.5) }), { maxLength: 3 });

/** Strings filters compare: case, accents, code point order, LIKE's wildcards, a backslash. */
const STRINGS = ['open', 'Open', 'OPEN', 'reopened', 'closed', 'é', 'É', 'B', 'a', '', '50%_x', 'a\\b', '1', 'garden fox'];
const NUMBERS = [-2, -1, 0, 1, 1.5, 2];
const scalar = fc.oneof(fc.constantFrom(...STRINGS), fc.constantFrom(...NUMBERS), fc.boolean(), fc.constant(null));
/** Any value a filtered field may hold: scalars mostly, sometimes an array or an object. */
const fieldValue = fc.oneof({ weight: 8, arbitrary: scalar }, { weight: 1, arbitrary: fc.constant(['open']) }, { weight: 1, arbitrary: fc.constant({ k: 'open' }) });

const recordData = fc.record(
  {
    title: text,
    body: text,
    tags,
    n: fc.oneof(fc.constantFrom(...NUMBERS), fc.constantFrom('2', 'x')),
    status: fieldValue,
    meta: fc.oneof(fc.record({ k: fieldValue, j: scalar }, { requiredKeys: [] }), fc.constant('flat')),
  },
  { requiredKeys: [] },
);

/**
 * Searched paths, never holding booleans or objects: SQLite searches `true` as `1`, and PostgreSQL
 * writes an object's keys in its own order, so a phrase across two members may differ (both said
 * in docs/queries.md, Search).
 */
const SEARCHABLE = ['data.title', 'data.body', 'data.tags', 'data.n'];
const FIRST_FIELDS = ['data.title', 'data.body'];

// ---- Merge patches ------------------------------------------------------------------------

const patch = fc.record(
  {
    status: fc.oneof(fieldValue, fc.constant(null)),
    n: fc.oneof(fc.constantFrom(...NUMBERS), fc.constant(null)),
    title: fc.oneof(text, tags, fc.constant(3.5), fc.constant(null)),
    tags: fc.oneof(tags, fc.constant(null)),
    meta: fc.oneof(fc.record({ k: fc.oneof(fieldValue, fc.constant(null)), z: fc.oneof(scalar, fc.constant([1, null])) }, { requiredKeys: [] }), scalar),
    extra: fc.oneof(scalar, fc.constant({ a: { b: 1 } })),
  },
  { requiredKeys: [] },
);

/** RFC 7396, written here from the RFC: objects merge, null removes, anything else replaces. */
function mergePatch(target: unknown, change: unknown): unknown {
  if (!isObject(change)) return change;
  const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(change)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Equal JSON whatever the order of object keys (a patch that changes nothing updates nothing). */
function sameJson(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => sameJson(item, b[i]));
  if (isObject(a) && isObject(b)) return Object.keys(a).length === Object.keys(b).length && Object.keys(a).every((key) => Object.hasOwn(b, key) && sameJson(a[key], b[key]));
  return a === b;
}

// ---- Filters ------------------------------------------------------------------------------

type Filter = { field: string; op: string; value: unknown } | { all: Filter[] } | { any: Filter[] };

const FILTER_FIELDS = ['data.status', 'data.n', 'data.title', 'data.meta.k'];
const comparison: fc.Arbitrary<Filter> = fc.oneof(
  fc.record({ field: fc.constantFrom(...FILTER_FIELDS), op: fc.constantFrom('=', '!='), value: fc.oneof(scalar, fc.constantFrom(...STRINGS)) }),
  fc.record({ field: fc.constantFrom(...FILTER_FIELDS), op: fc.constantFrom('<', '>'), value: fc.oneof(fc.constantFrom(...STRINGS), fc.constantFrom(...NUMBERS)) }),
  fc.record({ field: fc.constantFrom(...FILTER_FIELDS), op: fc.constantFrom('~*', '!~*'), value: fc.constantFrom('o', 'PEN', 'open', 'É', 'é', '%', '_', '\\', 'GARDEN', 'cafÉ', '') }),
);
const filter: fc.Arbitrary<Filter> = fc.oneof(
  { weight: 3, arbitrary: comparison },
  { weight: 1, arbitrary: fc.array(comparison, { minLength: 2, maxLength: 3 }).map((all) => ({ all })) },
  { weight: 1, arbitrary: fc.array(fc.oneof(comparison, fc.array(comparison, { minLength: 2, maxLength: 2 }).map((all): Filter => ({ all }))), { minLength: 2, maxLength: 3 }).map((any) => ({ any })) },
);
/** A filter, or "*" (every record) now and then. */
const bulkFilter = fc.oneof({ weight: 6, arbitrary: filter }, { weight: 1, arbitrary: fc.constant(null) });

function filterText(f: Filter | null): string {
  if (f === null) return '*';
  if ('all' in f) return f.all.map((part) => `(${filterText(part)})`).join(' && ');
  if ('any' in f) return f.any.map((part) => `(${filterText(part)})`).join(' || ');
  return `${f.field} ${f.op} ${JSON.stringify(f.value)}`;
}

/** What docs/queries.md ("What matches") says a filter selects. */
function selects(f: Filter | null, data: Record<string, unknown>): boolean {
  if (f === null) return true;
  if ('all' in f) return f.all.every((part) => selects(part, data));
  if ('any' in f) return f.any.some((part) => selects(part, data));
  const value = at(data, f.field);
  switch (f.op) {
    case '=':
      return equals(value, f.value);
    case '!=':
      return !equals(value, f.value);
    case '<':
    case '>': {
      const order = typeof value === 'number' && typeof f.value === 'number' ? Math.sign(value - f.value) : typeof value === 'string' && typeof f.value === 'string' ? byCodePoint(value, f.value) : undefined;
      return order !== undefined && (f.op === '<' ? order < 0 : order > 0);
    }
    case '~*':
      return containsIgnoringAsciiCase(value, f.value as string);
    case '!~*':
      return !containsIgnoringAsciiCase(value, f.value as string);
    default:
      throw new Error(`no model for ${f.op}`);
  }
}

function at(data: Record<string, unknown>, path: string): unknown {
  let value: unknown = data;
  for (const segment of path.slice('data.'.length).split('.')) value = isObject(value) && Object.hasOwn(value, segment) ? value[segment] : undefined;
  return value;
}

/** Type-strict; null and missing are the same; an array or object never equals a scalar. */
function equals(value: unknown, wanted: unknown): boolean {
  if (wanted === null) return value === null || value === undefined;
  return value === wanted;
}

function byCodePoint(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0)!);
  const y = Array.from(b, (c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return Math.sign(x[i]! - y[i]!);
  return Math.sign(x.length - y.length);
}

/** Only A–Z and a–z fold; anything that is not a string never contains anything. */
function containsIgnoringAsciiCase(value: unknown, part: string): boolean {
  const fold = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
  return typeof value === 'string' && fold(value).includes(fold(part));
}

// ---- Searches -----------------------------------------------------------------------------

/** A term as the model reads it: lower-cased words next to each other, the last a prefix or not. */
interface Term {
  words: string[];
  prefix: boolean;
}
interface Search {
  text: string;
  terms: Term[];
}

const casing = fc.constantFrom((w: string) => w, (w: string) => w.toUpperCase(), (w: string) => w.toLowerCase());
const term: fc.Arbitrary<{ text: string; term: Term }> = fc.oneof(
  // A word, perhaps in punctuation that separates it from nothing.
  fc.tuple(word, casing, fc.constantFrom(['', ''], ['(', ')'], ['', ','], ['', '.'])).map(([w, cased, [open, close]]) => ({ text: `${open}${cased(w)}${close}`, term: { words: [w.toLowerCase()], prefix: false } })),
  // A prefix: the first letters of a word.
  fc.tuple(word, fc.integer({ min: 1, max: 4 }), casing).map(([w, length, cased]) => {
    const start = Array.from(w).slice(0, length).join('');
    return { text: `${cased(start)}*`, term: { words: [start.toLowerCase()], prefix: true } };
  }),
  // A phrase: quoted, or words joined by punctuation; a quoted one may end in a prefix.
  fc.tuple(word, word, casing, fc.constantFrom('quoted', 'quoted prefix', 'hyphen')).map(([a, b, cased, form]) => {
    const words = [a.toLowerCase(), b.toLowerCase()];
    if (form === 'hyphen') return { text: `${cased(a)}-${cased(b)}`, term: { words, prefix: false } };
    if (form === 'quoted') return { text: `"${cased(a)}, ${cased(b)}"`, term: { words, prefix: false } };
    const start = Array.from(b).slice(0, 2).join('');
    return { text: `"${cased(a)} ${cased(start)}"*`, term: { words: [words[0]!, start.toLowerCase()], prefix: true } };
  }),
);
const search: fc.Arbitrary<Search> = fc.array(term, { minLength: 1, maxLength: 3 }).map((terms) => ({ text: terms.map((t) => t.text).join(' '), terms: terms.map((t) => t.term) }));
const searches = fc.array(search, { minLength: 2, maxLength: 3 });

const WORD = /[\p{L}\p{N}\p{M}]+/gu;
/** The words of a searched field: a string's, a number's digits, an array's or object's JSON text. */
function fieldWords(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  const textOf = typeof value === 'string' ? value : typeof value === 'number' ? String(value) : JSON.stringify(value);
  return (textOf.match(WORD) ?? []).map((w) => w.toLowerCase());
}

const hasMark = (w: string) => /\p{M}/u.test(w);
const wordIs = (candidate: string, wanted: string, prefix: boolean) => (prefix ? candidate.startsWith(wanted) : candidate === wanted);

/** Every term found in one field's words, consecutively; words with combining marks never count here. */
function mustMatch(data: Record<string, unknown>, fields: string[], terms: Term[]): boolean {
  return terms.every(({ words, prefix }) =>
    !words.some(hasMark) &&
    fields.some((field) => {
      const found = fieldWords(at(data, field)).map((w) => (hasMark(w) ? '\u0000' : w));
      return found.some((_, start) => words.every((w, i) => found[start + i] !== undefined && wordIs(found[start + i]!, w, prefix && i === words.length - 1)));
    }),
  );
}

/** Every word of every term somewhere in the record's searched words, composed or decomposed alike. */
function mayMatch(data: Record<string, unknown>, fields: string[], terms: Term[]): boolean {
  const found = fields.flatMap((field) => fieldWords(at(data, field)));
  const forms = (w: string) => [w, w.normalize('NFC'), w.normalize('NFD')];
  return terms.every(({ words, prefix }) =>
    words.every((w, i) => found.some((candidate) => forms(candidate).some((c) => forms(w).some((wanted) => wordIs(c, wanted, prefix && i === words.length - 1))))),
  );
}

// ---- One run, on one engine ---------------------------------------------------------------

interface Scenario {
  first: Record<string, unknown>[];
  more: Record<string, unknown>[];
  fields: string[];
  searches: Search[];
  update: { filter: Filter | null; patch: Record<string, unknown> };
  remove: Filter | null;
}

interface Side {
  t: TestApp;
  owner: Client;
  neighbour: Client;
}

type Answer = { status: number; body: unknown };

/** What a run saw on one engine: every answer, with records named by their `i` (ids differ by engine). */
interface Seen {
  searches: { step: string; text: string; status: number; found: number[] | unknown }[];
  building: Answer;
  update: Answer[];
  remove: Answer[];
  live: Record<string, unknown>[];
  trash: Record<string, unknown>[];
  neighbour: { live: Record<string, unknown>[]; trash: Record<string, unknown>[] };
}

async function runOn({ t, owner, neighbour }: Side, name: string, s: Scenario): Promise<Seen> {
  const records = `/v1/collections/${name}/records`;
  // An error's code and details (its request id and wording are each answer's own).
  const answer = (reply: Answer): Answer => {
    const error = (reply.body as { error?: { code: string; details?: unknown } }).error;
    return { status: reply.status, body: error ? { code: error.code, details: error.details } : reply.body };
  };
  const searchAll = async (client: Client, step: string, text: string, more = '') => {
    const reply = await client.get(`${records}?limit=1000&search=${encodeURIComponent(text)}${more}`);
    const found = reply.status === 200 ? (reply.body.data as { data: { i: number } }[]).map((r) => r.data.i).sort((a, b) => a - b) : answer(reply).body;
    return { step, text, status: reply.status, found };
  };
  const dataOf = async (client: Client, query = '') => {
    const reply = await client.get(`${records}?limit=1000${query}`);
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return (reply.body.data as { data: Record<string, unknown> }[]).map((r) => r.data).sort((a, b) => (a.i as number) - (b.i as number));
  };

  for (const client of [owner, neighbour]) {
    expect((await client.post('/v1/collections', { name, settings: { searchFields: FIRST_FIELDS } })).status).toBe(201);
  }
  // One import a time (indexed as it is written, like any write): one request, not one per record.
  const add = async (client: Client, rows: Record<string, unknown>[]) => {
    if (rows.length === 0) return;
    const imported = await client.call('POST', `/v1/collections/${name}/import`, rows.map((data) => `${JSON.stringify(data)}\n`).join(''), { 'content-type': 'application/x-ndjson' });
    expect(imported.status, JSON.stringify(imported.body)).toBeLessThan(300);
  };
  await add(owner, s.first);
  await add(neighbour, [...s.first, ...s.more]);

  const seen: Seen['searches'] = [];
  for (const q of s.searches) seen.push(await searchAll(owner, 'written', q.text));

  await add(owner, s.more);
  // The app's own background build is stopped (beforeAll): until the test runs it, search answers 409.
  expect((await owner.patch(`/v1/collections/${name}`, { settings: { searchFields: s.fields } })).status).toBe(200);
  const building = answer(await owner.get(`${records}?search=garden`));
  await buildWaitingSearchIndexes(t.deps);
  for (const q of s.searches) seen.push(await searchAll(owner, 'built', q.text));

  const update = [];
  for (const dryRun of [true, false]) update.push(answer(await owner.post(`${records}/bulk-update`, { filter: filterText(s.update.filter), patch: s.update.patch, dryRun })));
  for (const q of s.searches) seen.push(await searchAll(owner, 'updated', q.text));

  const remove = [];
  for (const dryRun of [true, false]) remove.push(answer(await owner.post(`${records}/bulk-delete`, { filter: filterText(s.remove), dryRun })));
  for (const q of s.searches) seen.push(await searchAll(owner, 'deleted', q.text), await searchAll(owner, 'trash', q.text, '&trashed=true'));
  // The other workspace's collection of the same name still searches its own first fields.
  seen.push(await searchAll(neighbour, 'neighbour', s.searches[0]!.text));

  return {
    searches: seen,
    building,
    update,
    remove,
    live: await dataOf(owner),
    trash: await dataOf(owner, '&trashed=true'),
    neighbour: { live: await dataOf(neighbour), trash: await dataOf(neighbour, '&trashed=true') },
  };
}

// ---- The property -------------------------------------------------------------------------

const scenario: fc.Arbitrary<Scenario> = fc
  .record({
    first: fc.array(recordData, { maxLength: 6 }),
    more: fc.array(recordData, { minLength: 1, maxLength: 5 }),
    // Always other than the first fields (data.tags is among them), so that a build starts.
    fields: fc.shuffledSubarray(SEARCHABLE.filter((f) => f !== 'data.tags')).chain((others) => fc.shuffledSubarray([...others, 'data.tags'], { minLength: others.length + 1 })),
    searches,
    update: fc.record({ filter: bulkFilter, patch }),
    remove: bulkFilter,
  })
  .map((s) => ({ ...s, first: s.first.map((data, i) => ({ ...data, i })), more: s.more.map((data, i) => ({ ...data, i: s.first.length + i })) }));

const postgres = inject('postgresUrl') !== null;
(postgres ? it : it.skip)('search and changes by filter answer alike on SQLite and PostgreSQL, and as the model says', { timeout: 120_000 }, async () => {
  let run = 0;
  await fc.assert(
    fc.asyncProperty(scenario, async (s) => {
      run += 1;
      const [sqlite, pg] = await Promise.all(sides.map((side) => runOn(side, `run${run}`, s)));
      expect(pg).toEqual(sqlite);
      checkModel(sqlite!, s);
    }),
    { numRuns: RUNS, seed: SEED, endOnFailure: true },
  );
});

/** What the docs promise about one engine's answers (both gave the same, checked before). */
function checkModel(seen: Seen, s: Scenario): void {
  const written = [...s.first, ...s.more];
  const matched = written.filter((data) => selects(s.update.filter, data));
  const updated = written.map((data) => (selects(s.update.filter, data) ? (mergePatch(data, s.update.patch) as Record<string, unknown>) : data));
  const changed = matched.filter((data) => !sameJson(mergePatch(data, s.update.patch), data)).length;
  const trashed = updated.filter((data) => selects(s.remove, data));
  const live = updated.filter((data) => !selects(s.remove, data));

  expect(seen.building.status).toBe(409);
  expect(seen.building.body).toEqual({ code: 'CONFLICT', details: { indexed: 0, total: written.length } });
  expect(seen.update).toEqual([{ status: 200, body: { matched: matched.length, updated: changed, dryRun: true } }, { status: 200, body: { matched: matched.length, updated: changed, dryRun: false } }]);
  expect(seen.remove).toEqual([{ status: 200, body: { matched: trashed.length, trashed: trashed.length, dryRun: true } }, { status: 200, body: { matched: trashed.length, trashed: trashed.length, dryRun: false } }]);
  expect(seen.live).toEqual(live);
  expect(seen.trash).toEqual(trashed);

  // What each search step searched: which records, in which fields.
  const steps: Record<string, [Record<string, unknown>[], string[]]> = {
    written: [s.first, FIRST_FIELDS],
    built: [written, s.fields],
    updated: [updated, s.fields],
    deleted: [live, s.fields],
    trash: [trashed, s.fields],
    neighbour: [written, FIRST_FIELDS],
  };
  for (const asked of seen.searches) {
    const [rows, fields] = steps[asked.step]!;
    const q = s.searches.find((candidate) => candidate.text === asked.text)!;
    expect(asked.status, JSON.stringify(asked.found)).toBe(200);
    const found = asked.found as number[];
    const must = rows.filter((data) => mustMatch(data, fields, q.terms)).map((data) => data.i);
    const may = new Set(rows.filter((data) => mayMatch(data, fields, q.terms)).map((data) => data.i));
    const where = `${asked.step}: ${q.text} in ${fields.join(',')}`;
    expect(found, where).toEqual(expect.arrayContaining(must));
    expect(found.filter((i) => !may.has(i)), where).toEqual([]);
  }

  // The other workspace's same-named collection: as written, nothing trashed.
  expect(seen.neighbour.live).toEqual(written);
  expect(seen.neighbour.trash).toEqual([]);
}

let sides: Side[] = [];
beforeAll(async () => {
  if (!postgres) return;
  sides = await Promise.all(
    (['sqlite', 'postgres'] as const).map(async (engine) => {
      const t = await startTestApp(engine);
      // The test runs the builds itself, so that it sees the 409 before one (as test/search.test.ts).
      t.deps.services.searchBuilds.stopped = true;
      const owner = await signedInOwner(t);
      return { t, owner, neighbour: await inNewWorkspace(t, owner, 'neighbour') };
    }),
  );
});
afterAll(async () => {
  await Promise.all(sides.map(({ t }) => t.close()));
});
