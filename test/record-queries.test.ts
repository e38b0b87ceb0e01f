import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeJson } from '../src/db/dialect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import type { Storage } from '../src/db/connect.js';
import type { Db } from '../src/db/schema.js';
import { AppError } from '../src/errors.js';
import { newId } from '../src/ids.js';
import { FILTER_LIMITS, parseFilter } from '../src/modules/records/query/filter-parser.js';
import { countRecords, decodeCursor, encodeCursor, listRecordRows, type Cursor } from '../src/modules/records/query/list.js';
import { parseSort } from '../src/modules/records/query/sort-parser.js';
import { describeEachEngine, freshStorage } from './support/harness.js';

/**
 * One table of queries, run on both engines with the same expected answers. The records mix
 * types on purpose: age is a number in most, a string in one, null in one, missing in others.
 */
const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const at = (minute: number) => new Date(T0 + minute * 60_000).toISOString();

interface Seed {
  label: string;
  data: Record<string, unknown>;
  createdAt: string;
  updatedAt?: string;
  trashed?: boolean;
}

const SEEDS: Seed[] = [
  { label: 'ann', createdAt: at(1), data: { name: 'Ann', age: 34, status: 'open', vip: true, tags: ['red', 'blue'], address: { city: 'Oslo' }, score: 1.5 } },
  { label: 'bob', createdAt: at(2), data: { name: 'bob', age: '34', status: 'closed', vip: false, tags: ['green'], address: { city: 'Bergen' } } },
  { label: 'cid', createdAt: at(3), data: { name: 'Cid', age: 17, status: null, tags: 'red-ish', address: { city: 'Oslo', zip: '0150' } } },
  // dee has the same createdAt as cid: the id breaks the tie.
  { label: 'dee', createdAt: at(3), updatedAt: at(9), data: { name: 'Dee', age: 18, status: 'open', vip: 'true', tags: [1, 2, '3'], address: 'Oslo' } },
  { label: 'eve', createdAt: at(5), data: { name: 'éve', age: 65.5, status: 'open', tags: [], score: -3 } },
  { label: 'fay', createdAt: at(6), data: { name: ['F'], age: null, status: 'Open', tags: [null, true] } },
  { label: 'gus', createdAt: at(7), data: { name: 'Gus', age: 1000, nested: { deep: { x: 1 } } } },
  { label: 'hal', createdAt: at(8), data: {} },
  { label: 'ivy', createdAt: at(4), trashed: true, data: { name: 'Ivy', age: 40, status: 'open' } },
];
const LIVE = ['ann', 'bob', 'cid', 'dee', 'eve', 'fay', 'gus', 'hal'];

interface QueryCase {
  filter?: string | ((id: (label: string) => string) => string);
  sort?: string;
  expected: string[];
}

const CASES: QueryCase[] = [
  // Default order: oldest first by id.
  { expected: LIVE },
  // Type-strict comparisons.
  { filter: 'data.age >= 18', expected: ['ann', 'dee', 'eve', 'gus'] },
  { filter: 'data.age > 17.5 && data.age < 20', expected: ['dee'] },
  { filter: 'data.age <= 17', expected: ['cid'] },
  { filter: 'data.age = 34', expected: ['ann'] },
  { filter: 'data.age = "34"', expected: ['bob'] },
  { filter: 'data.age = 18.0', expected: ['dee'] },
  { filter: 'data.age >= "0"', expected: ['bob'] },
  { filter: 'data.score < 0', expected: ['eve'] },
  // null: null and missing are the same; != is the negation of =.
  { filter: 'data.age = null', expected: ['fay', 'hal'] },
  { filter: 'data.age != null', expected: ['ann', 'bob', 'cid', 'dee', 'eve', 'gus'] },
  { filter: 'data.status = null', expected: ['cid', 'gus', 'hal'] },
  { filter: 'data.status = "open"', expected: ['ann', 'dee', 'eve'] },
  { filter: 'data.status != "open"', expected: ['bob', 'cid', 'fay', 'gus', 'hal'] },
  { filter: 'data.tags = null', expected: ['gus', 'hal'] },
  // Booleans are not strings.
  { filter: 'data.vip = true', expected: ['ann'] },
  { filter: 'data.vip = "true"', expected: ['dee'] },
  { filter: 'data.vip = false', expected: ['bob'] },
  { filter: 'data.vip != true', expected: ['bob', 'cid', 'dee', 'eve', 'fay', 'gus', 'hal'] },
  // Strings compare by code point: upper case before lower case, é after both.
  { filter: 'data.name > "C" && data.name < "a"', expected: ['cid', 'dee', 'gus'] },
  { filter: 'data.name >= "a"', expected: ['bob', 'eve'] },
  { filter: 'data.name = "Ann"', expected: ['ann'] },
  { filter: 'data.name = "ann"', expected: [] },
  // ~ : substring of a string, element of an array.
  { filter: 'data.tags ~ "red"', expected: ['ann', 'cid'] },
  { filter: 'data.tags ~ "Red"', expected: [] },
  { filter: 'data.tags ~ ""', expected: ['cid'] },
  { filter: 'data.tags ~ 1', expected: ['dee'] },
  { filter: 'data.tags ~ 1.0', expected: ['dee'] },
  { filter: 'data.tags ~ "3"', expected: ['dee'] },
  { filter: 'data.tags ~ 3', expected: [] },
  { filter: 'data.tags ~ null', expected: ['fay'] },
  { filter: 'data.tags ~ true', expected: ['fay'] },
  { filter: 'data.name ~ "e"', expected: ['dee', 'eve'] },
  { filter: 'data.address ~ "Os"', expected: ['dee'] },
  // ~* : substring of a string, A–Z taken as a–z; never of an array; !~* is its negation.
  { filter: 'data.name ~* "E"', expected: ['dee', 'eve'] },
  { filter: 'data.name ~* "aNn"', expected: ['ann'] },
  { filter: 'data.status ~* "OPEN"', expected: ['ann', 'dee', 'eve', 'fay'] },
  { filter: 'data.tags ~* "red"', expected: ['cid'] },
  { filter: 'data.name ~* "ÉV"', expected: [] },
  { filter: 'data.name ~* "éV"', expected: ['eve'] },
  { filter: 'data.name ~* ""', expected: ['ann', 'bob', 'cid', 'dee', 'eve', 'gus'] },
  { filter: 'data.address ~* "os"', expected: ['dee'] },
  { filter: 'data.status !~* "open"', expected: ['bob', 'cid', 'gus', 'hal'] },
  { filter: 'data.name !~* "%"', expected: LIVE },
  { filter: 'data.zip ~* "_" || data.address.zip ~* "0_5"', expected: [] },
  // Nested paths; a path through a non-object is missing.
  { filter: 'data.address.city = "Oslo"', expected: ['ann', 'cid'] },
  { filter: 'data.address.zip = "0150"', expected: ['cid'] },
  { filter: 'data.address.city = null', expected: ['dee', 'eve', 'fay', 'gus', 'hal'] },
  { filter: 'data.nested.deep.x = 1', expected: ['gus'] },
  // in
  { filter: 'data.name in ["Ann", "bob", "nobody"]', expected: ['ann', 'bob'] },
  { filter: 'data.age in [17, "34", null]', expected: ['bob', 'cid', 'fay', 'hal'] },
  { filter: 'data.vip in [true, false]', expected: ['ann', 'bob'] },
  { filter: 'data.age in []', expected: [] },
  // Connectives and precedence.
  { filter: 'data.age >= 18 && (data.status = "open" || data.vip = true)', expected: ['ann', 'dee', 'eve'] },
  { filter: 'data.age >= 18 && data.status = "open" || data.vip = true', expected: ['ann', 'dee', 'eve'] },
  { filter: 'data.vip = false || data.age = 17 && data.status = null', expected: ['bob', 'cid'] },
  { filter: '(data.vip = false || data.age = 17) && data.status = null', expected: ['cid'] },
  // Columns.
  { filter: (id) => `id = "${id('dee')}"`, expected: ['dee'] },
  { filter: (id) => `id in ["${id('bob')}", "${id('gus')}", "rec_none"]`, expected: ['bob', 'gus'] },
  { filter: (id) => `id > "${id('fay')}"`, expected: ['gus', 'hal'] },
  { filter: `createdAt >= "${at(6)}"`, expected: ['fay', 'gus', 'hal'] },
  { filter: 'createdAt < "2026-01-01T00:03"', expected: ['ann', 'bob'] },
  { filter: `updatedAt > "${at(8)}"`, expected: ['dee'] },
  // Sorts: null/missing first ascending, then numbers, strings, booleans, arrays and objects.
  { sort: 'data.age', expected: ['fay', 'hal', 'cid', 'dee', 'ann', 'eve', 'gus', 'bob'] },
  { sort: '-data.age', expected: ['bob', 'gus', 'eve', 'ann', 'dee', 'cid', 'hal', 'fay'] },
  { sort: 'data.name', expected: ['hal', 'ann', 'cid', 'dee', 'gus', 'bob', 'eve', 'fay'] },
  { sort: '-data.name', expected: ['fay', 'eve', 'bob', 'gus', 'dee', 'cid', 'ann', 'hal'] },
  { sort: 'data.vip', expected: ['cid', 'eve', 'fay', 'gus', 'hal', 'dee', 'bob', 'ann'] },
  { sort: 'data.tags', expected: ['gus', 'hal', 'cid', 'ann', 'bob', 'dee', 'eve', 'fay'] },
  { sort: 'data.address.city,-id', expected: ['hal', 'gus', 'fay', 'eve', 'dee', 'bob', 'cid', 'ann'] },
  { sort: '-createdAt', expected: ['hal', 'gus', 'fay', 'eve', 'dee', 'cid', 'bob', 'ann'] },
  { sort: 'createdAt', expected: ['ann', 'bob', 'cid', 'dee', 'eve', 'fay', 'gus', 'hal'] },
  { sort: '-createdAt,data.name', expected: ['hal', 'gus', 'fay', 'eve', 'cid', 'dee', 'bob', 'ann'] },
  { sort: 'data.status,-data.age', expected: ['gus', 'cid', 'hal', 'fay', 'bob', 'eve', 'ann', 'dee'] },
  { sort: '-id', expected: [...LIVE].reverse() },
  { sort: 'updatedAt,id', expected: ['ann', 'bob', 'cid', 'eve', 'fay', 'gus', 'hal', 'dee'] },
  // Filter and sort together, including a sort on the filtered field.
  { filter: 'data.status = "open"', sort: '-data.age', expected: ['eve', 'ann', 'dee'] },
  { filter: 'data.age >= 18', sort: 'data.age', expected: ['dee', 'ann', 'eve', 'gus'] },
  { filter: 'data.age >= 18', sort: '-data.age', expected: ['gus', 'eve', 'ann', 'dee'] },
  { filter: 'data.name >= "C"', sort: '-data.name', expected: ['eve', 'bob', 'gus', 'dee', 'cid'] },
  { filter: 'data.age = null', sort: 'data.age', expected: ['fay', 'hal'] },
];

const describeCase = (c: QueryCase) =>
  `${typeof c.filter === 'function' ? c.filter((label) => `<${label}>`) : (c.filter ?? '(no filter)')} | sort ${c.sort ?? '(default)'}`;

// Odd but valid input runs as a query on both engines: only the parser ever says no.
const ODD_FILTERS = [
  'data.a = 1e308 || data.a < -1e308 || data.a = 5e-324 || data.a = -0',
  String.raw`data.a = "x'; drop table records; --" || data.a ~ "%_\\" || data.a = "\"'"`,
  String.raw`data.a ~ "\ud83d\ude00" || data.a in ["é", "\u2028", ""]`,
  `data.${Array.from({ length: 16 }, (_, i) => `s${i}`).join('.')} != "x"`,
  `${'('.repeat(FILTER_LIMITS.maxDepth)}data.a = 1${')'.repeat(FILTER_LIMITS.maxDepth)}`,
  Array.from({ length: 340 }, (_, i) => `data.a=${i}`).join('||'),
  Array.from({ length: 250 }, (_, i) => `data.a!=${i}`).join('&&'),
  `data.a in [${Array.from({ length: FILTER_LIMITS.maxInValues }, (_, i) => (i % 2 ? i % 10 : '""')).join(',')}]`,
  `data.a in [${Array.from({ length: FILTER_LIMITS.maxInValues }, (_, i) => ['1', 'null', '""', 'true'][i % 4]).join(',')}]`,
  'data.a ~ null || data.a ~ false || data.a ~ 1e300',
  String.raw`data.a ~* "%" || data.a !~* "_\\%" || data.a ~* "\u2028x" || data.a ~* "İ"`,
  'data.constructor = 1 || data.__proto__.x = 1 || data.toString ~ "x"',
];

async function insertWorkspaceAndCollection(db: Db, workspaceId = newId('ws'), collectionId = newId('col')): Promise<{ workspaceId: string; collectionId: string }> {
  const now = at(0);
  await db.insertInto('workspaces').values({ id: workspaceId, name: workspaceId, created_at: now }).onConflict((oc) => oc.doNothing()).execute();
  await db
    .insertInto('collections')
    .values({ id: collectionId, workspace_id: workspaceId, name: collectionId, public: 0, settings: '{}', active_schema_version: null, created_at: now, updated_at: now, trashed_at: null })
    .execute();
  return { workspaceId, collectionId };
}

async function insertRecords(db: Db, scope: { workspaceId: string; collectionId: string }, seeds: Seed[]): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  for (const seed of seeds) {
    const id = newId('rec');
    ids.set(seed.label, id);
    await db
      .insertInto('records')
      .values({
        id,
        workspace_id: scope.workspaceId,
        collection_id: scope.collectionId,
        data: writeJson(seed.data),
        schema_version: null,
        revision: 1,
        created_at: seed.createdAt,
        updated_at: seed.updatedAt ?? seed.createdAt,
        trashed_at: seed.trashed ? at(100) : null,
      })
      .execute();
  }
  return ids;
}

describeEachEngine('record queries', (engine) => {
  let storage: Storage;
  let scope: { workspaceId: string; collectionId: string };
  let ids: Map<string, string>;
  let labels: Map<string, string>;

  beforeAll(async () => {
    storage = await freshStorage(engine);
    await migrateToLatest(storage.db);
    scope = await insertWorkspaceAndCollection(storage.db);
    ids = await insertRecords(storage.db, scope, SEEDS);
    labels = new Map([...ids].map(([label, id]) => [id, label]));
    // The same records in another collection and in another workspace must never show up.
    const otherCollection = await insertWorkspaceAndCollection(storage.db, scope.workspaceId);
    await insertRecords(storage.db, otherCollection, SEEDS);
    await insertRecords(storage.db, await insertWorkspaceAndCollection(storage.db), SEEDS);
  });
  afterAll(async () => {
    await storage?.close();
  });

  const idOf = (label: string) => ids.get(label)!;
  const filterOf = (c: QueryCase) => {
    const text = typeof c.filter === 'function' ? c.filter(idOf) : c.filter;
    return text === undefined ? undefined : parseFilter(text);
  };
  const query = (c: QueryCase) => ({ executor: storage.db, dialect: storage.dialect, ...scope, filter: filterOf(c), trashed: false });

  it.each(CASES.map((c) => [describeCase(c), c] as const))('%s', async (_title, c) => {
    const sort = parseSort(c.sort);
    const rows = await listRecordRows({ ...query(c), sort, limit: 1000 });
    expect(rows.map((row) => labels.get(row.id))).toEqual(c.expected);
    expect(await countRecords(query(c))).toBe(c.expected.length);

    // Page by page, two at a time: the same records in the same order.
    const paged: string[] = [];
    let after: Cursor | undefined;
    for (let page = 0; page < 20; page += 1) {
      const rows = await listRecordRows({ ...query(c), sort, limit: 2, after });
      paged.push(...rows.slice(0, 2).map((row) => labels.get(row.id)!));
      if (rows.length <= 2) break;
      after = decodeCursor(encodeCursor(rows[1]!, sort), sort);
    }
    expect(paged).toEqual(c.expected);
  });

  it.each(ODD_FILTERS.map((text) => [text.length > 80 ? `${text.slice(0, 77)}...` : text, text]))('runs %s', async (_title, text) => {
    expect(text.length).toBeLessThanOrEqual(FILTER_LIMITS.maxLength);
    const filter = parseFilter(text);
    await expect(listRecordRows({ ...query({ expected: [] }), filter, sort: parseSort('-data.a,createdAt'), limit: 5 })).resolves.toBeInstanceOf(Array);
    await expect(countRecords({ ...query({ expected: [] }), filter })).resolves.toBeTypeOf('number');
  });

  it('lists the trash instead with trashed: true', async () => {
    const rows = await listRecordRows({ ...query({ expected: [] }), trashed: true, sort: parseSort(undefined), limit: 10 });
    expect(rows.map((row) => labels.get(row.id))).toEqual(['ivy']);
    expect(await countRecords({ ...query({ filter: 'data.age >= 40', expected: [] }), trashed: true })).toBe(1);
  });

  it('reads only the columns asked for, and those a cursor needs', async () => {
    const rows = await listRecordRows({ ...query({ expected: [] }), sort: parseSort('data.name'), limit: 1, fields: ['schema_version'] });
    expect(Object.keys(rows[0]!).sort()).toEqual(['created_at', 'data', 'id', 'schema_version', 'updated_at']);
  });

  it('refuses cursors that are not ours or not for this sort', async () => {
    const sort = parseSort('data.name');
    const [first] = await listRecordRows({ ...query({ expected: [] }), sort, limit: 1 });
    const good = encodeCursor(first!, sort);
    const forge = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const bad = [
      'not a cursor!',
      'bm90IGpzb24',
      forge([1, 2]),
      forge({ s: 'data.name', v: [] }),
      forge({ s: 'data.name', v: [2, 'x', 0, 'rec_1', 'extra'] }),
      forge({ s: 'data.name', v: [7, 'x', 0, 'rec_1'] }),
      forge({ s: 'data.name', v: [2, 'a\u0000b', 0, 'rec_1'] }),
      forge({ s: 'data.name', v: [2, 'x', 'NaN', 'rec_1'] }),
      forge({ s: 'data.name', v: [2, 'x', 0, null] }),
    ];
    for (const text of bad) {
      let error: unknown;
      try {
        decodeCursor(text, sort);
      } catch (caught) {
        error = caught;
      }
      expect(error, text).toBeInstanceOf(AppError);
      expect((error as AppError).details).toEqual({ field: 'querystring.cursor' });
    }
    expect(() => decodeCursor(good, parseSort('-data.name'))).toThrow(/another sort/);
    // The first by data.name is hal, which has no name: NULL in every part of the key.
    expect(decodeCursor(good, sort).values).toEqual([null, null, null, first!.id]);
  });

  // Keyset paging stays exact while records are added between pages: every record that was there
  // from the start is seen once, in its place; new ones appear or not depending on where they sort.
  const PAGING_SORTS = [
    undefined, '-id', 'data.age', '-data.age', 'data.name', '-data.name', 'data.vip', 'data.tags',
    '-createdAt,data.name', 'createdAt,-data.age', 'data.status,-data.age,data.address.city',
  ];
  const NEWCOMERS: Record<string, unknown>[] = [
    { name: 'Aaa', age: 0 }, { age: 10_000 }, {}, { name: 'zzz', age: 34, status: 'open' }, { name: null, vip: true, tags: ['red'] },
    { age: '34', name: 'Ann' }, { status: 'closed', age: 18 }, { vip: false, name: [] },
  ];

  it.each(PAGING_SORTS)('pages through sort %s with limit 3 while records are added', async (sortText) => {
    const pagingScope = await insertWorkspaceAndCollection(storage.db, scope.workspaceId);
    const seeded = await insertRecords(storage.db, pagingScope, SEEDS);
    const sort = parseSort(sortText);
    const base = { executor: storage.db, dialect: storage.dialect, ...pagingScope, trashed: false, sort };
    const before = (await listRecordRows({ ...base, limit: 1000 })).map((row) => row.id);
    expect(before).toHaveLength(LIVE.length);

    const seen: string[] = [];
    let after: Cursor | undefined;
    for (let page = 0; page < 30; page += 1) {
      const rows = await listRecordRows({ ...base, limit: 3, after });
      seen.push(...rows.slice(0, 3).map((row) => row.id));
      if (rows.length <= 3) break;
      after = decodeCursor(encodeCursor(rows[2]!, sort), sort);
      const newcomers = [NEWCOMERS[(2 * page) % NEWCOMERS.length]!, NEWCOMERS[(2 * page + 1) % NEWCOMERS.length]!];
      await insertRecords(storage.db, pagingScope, newcomers.map((data, i) => ({ label: `new${page}.${i}`, data, createdAt: at(3 + page) })));
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.filter((id) => before.includes(id))).toEqual(before);
    expect([...seeded.values()].filter((id) => !before.includes(id))).toEqual([seeded.get('ivy')]);
  });

  it('pages a filtered sort on the filtered field while records are added', async () => {
    const pagingScope = await insertWorkspaceAndCollection(storage.db, scope.workspaceId);
    await insertRecords(storage.db, pagingScope, SEEDS);
    const sort = parseSort('data.age');
    const filter = parseFilter('data.age >= 18');
    const base = { executor: storage.db, dialect: storage.dialect, ...pagingScope, trashed: false, sort, filter };
    const before = (await listRecordRows({ ...base, limit: 1000 })).map((row) => row.id);
    const seen: string[] = [];
    let after: Cursor | undefined;
    for (let page = 0; page < 30; page += 1) {
      const rows = await listRecordRows({ ...base, limit: 1, after });
      seen.push(...rows.slice(0, 1).map((row) => row.id));
      if (rows.length <= 1) break;
      after = decodeCursor(encodeCursor(rows[0]!, sort), sort);
      // One that ties with the first page's value (its id puts it after), one the filter leaves out, one at the end.
      const newcomers = [{ age: page === 0 ? 18 : 17 }, { age: '50' }, { age: page < 3 ? 10_000 + page : 17 }];
      await insertRecords(storage.db, pagingScope, newcomers.map((data) => ({ label: 'new', data, createdAt: at(50) })));
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.filter((id) => before.includes(id))).toEqual(before);
    expect(seen).toHaveLength(before.length + 4);
  });
});

describe('the query table', () => {
  it('expects only live records of the collection', () => {
    for (const c of CASES) for (const label of c.expected) expect(LIVE).toContain(label);
  });
});
