import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { sql } from 'kysely';
import { parse as parseCsvText } from 'csv-parse/sync';
import { eventMessageText } from '../src/modules/events/outbox.js';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { addMember, expectError, signedInOwner, type Client, type Reply } from './support/client.js';
import { outbox } from './support/events.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

const NDJSON = 'application/x-ndjson';
const CSV = 'text/csv';
const JSON_TYPE = 'application/json';

const peopleSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1 },
    age: { type: 'integer', minimum: 0 },
    vip: { type: 'boolean' },
    score: { type: 'number' },
    tags: { type: 'array', items: { type: 'string' } },
  },
  required: ['name'],
  additionalProperties: false,
};

const ndjson = (rows: unknown[]) => rows.map((row) => JSON.stringify(row)).join('\n') + '\n';

describeEachEngine('import and export', (engine) => {
  let t: TestApp;
  let owner: Client;
  beforeEach(async () => {
    t = await startTestApp(engine);
    owner = await signedInOwner(t);
    await owner.post('/v1/collections', { name: 'leads' });
  });
  afterEach(async () => { await t.close(); });

  const importBody = (body: string, contentType: string, query = '', collection = 'leads'): Promise<Reply> =>
    owner.call('POST', `/v1/collections/${collection}/import${query}`, body, { 'content-type': contentType });

  /** The collection's live records as stored, oldest first. */
  async function storedRecords(collection = 'leads') {
    const rows = await t.deps.db
      .selectFrom('records')
      .innerJoin('collections', 'collections.id', 'records.collection_id')
      .select(['records.id', 'records.data', 'records.schema_version', 'records.created_at', 'records.trashed_at'])
      .where('collections.name', '=', collection)
      .orderBy('records.id')
      .execute();
    return rows.map((row) => ({ id: row.id, data: t.deps.dialect.readJson(row.data) as Record<string, unknown>, schemaVersion: row.schema_version, createdAt: row.created_at, trashedAt: row.trashed_at }));
  }

  const createdEvents = async () => (await outbox(t)).filter((event) => event.type === 'record.created');

  /** An export, read whole, with its headers (the Client would try to parse NDJSON as JSON). */
  async function exportText(query = '', collection = 'leads') {
    const response = await t.app.inject({
      method: 'GET',
      url: `/v1/collections/${collection}/export${query}`,
      headers: { cookie: `plainbase_session=${owner.cookie}`, 'x-baas-workspace': owner.workspaceId! },
    });
    return { status: response.statusCode, headers: response.headers, text: response.body };
  }

  const exportedLines = (text: string) => text.split('\n').filter(Boolean).map((line) => JSON.parse(line));

  async function activateSchema(schema: Record<string, unknown>, collection = 'leads') {
    const created = await owner.post(`/v1/collections/${collection}/schemas`, { schema });
    expect(created.status).toBe(201);
    expect((await owner.post(`/v1/collections/${collection}/schemas/${created.body.version}/activate`)).status).toBe(200);
  }

  // -------------------------------------------------------------------------------------------
  // Import: the three formats

  it('imports NDJSON (blank lines, CRLF, every NDJSON content type) with one record.created per record', async () => {
    const rows = [{ name: 'Ada', age: 36, tags: ['a'], address: { city: 'London' } }, { name: 'Grace' }, { name: 'Linus', vip: true }];
    const body = `${JSON.stringify(rows[0])}\r\n\n${JSON.stringify(rows[1])}\n   \n${JSON.stringify(rows[2])}`;
    const reply = await importBody(body, NDJSON);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ imported: 3, rejected: [], rejectedCount: 0 });

    const stored = await storedRecords();
    expect(stored.map((record) => record.data)).toEqual(rows);
    expect(stored.every((record) => /^rec_[0-9a-z]{26}$/.test(record.id) && record.schemaVersion === null)).toBe(true);
    const events = await createdEvents();
    expect(events).toHaveLength(3);
    expect(events.map((event) => event.data)).toEqual(stored.map((record) => ({ record: { id: record.id, data: record.data } })));

    for (const type of ['application/jsonl', 'application/ndjson', 'application/x-ndjson; charset=utf-8']) {
      expect((await importBody('{"n": 1}\n', type)).body.imported, type).toBe(1);
    }
    expect(await storedRecords()).toHaveLength(6);

    const audit = await owner.get('/v1/audit-log?action=collection.records_imported');
    expect(audit.body.data).toHaveLength(4);
    expect(audit.body.data[3]).toMatchObject({ actor: { type: 'person' }, target: { type: 'collection' }, details: { format: 'ndjson', mode: 'all', imported: 3, rejectedCount: 0 } });
  });

  it('an imported record\'s event is the message emitEvents writes, and keeps the record as imported after it changes', async () => {
    // Text that JSON escapes, characters outside the BMP, numbers JSON writes differently than read.
    const rows = [
      { name: 'quote " and backslash \\ and tab \t', emoji: '🚀 ünïcödé', nested: { list: [1.0, 1e2, -0.5, null, true] } },
      { '': 'an empty key', 'a.b': { 'c"d': [] } },
      { n: 3 },
    ];
    const body = `${JSON.stringify(rows[0])}\n${JSON.stringify(rows[1])}\n{"n": 3.0}\n`;
    expect((await importBody(body, NDJSON)).body).toEqual({ imported: 3, rejected: [], rejectedCount: 0 });
    const stored = await storedRecords();
    expect(stored.map((record) => record.data)).toEqual(rows);
    expect((await owner.patch(`/v1/collections/leads/records/${stored[0]!.id}`, { data: { name: 'changed later' } })).status).toBe(200);

    const collectionId = (await owner.get('/v1/collections/leads')).body.id;
    const events = await t.deps.db.selectFrom('events').selectAll().where('type', '=', 'record.created').orderBy('id').execute();
    expect(events).toHaveLength(3);
    events.forEach((event, i) => {
      const text = eventMessageText(event);
      const message = JSON.parse(text);
      // The text JSON.stringify gives the same message, key for key: what a delivery sends as its body.
      expect(text).toBe(JSON.stringify({
        id: event.id,
        type: 'record.created',
        createdAt: event.created_at,
        workspaceId: event.workspace_id,
        collectionId: event.collection_id,
        data: { record: { id: stored[i]!.id, data: rows[i] } },
      }));
      expect(message.createdAt).toBe(stored[i]!.createdAt);
      expect([event.workspace_id, event.collection_id]).toEqual([owner.workspaceId, collectionId]);
    });
    // The event ids sort like the records: in the order of the body.
    expect(events.map((event) => JSON.parse(event.data).record.id)).toEqual(stored.map((record) => record.id));
  });

  it('imports a JSON array, each element the data of one record', async () => {
    const rows = [{ name: 'Ada', nested: { list: [1, { deep: true }] } }, { name: 'Grace', n: null }];
    const reply = await importBody(JSON.stringify(rows, null, 2), JSON_TYPE);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ imported: 2, rejected: [], rejectedCount: 0 });
    expect((await storedRecords()).map((record) => record.data)).toEqual(rows);
    expect(await createdEvents()).toHaveLength(2);
  });

  it('imports CSV: a header row, text cells, empty cells left out, quoted cells across lines', async () => {
    const body = '\uFEFFname, age ,note\r\nAda,36,"likes ""quotes"", commas"\r\n\r\nGrace,,"two\nlines"\r\nLinus,55,\r\n';
    const reply = await importBody(body, `${CSV}; charset=utf-8`);
    expect(reply.status).toBe(200);
    expect(reply.body.imported).toBe(3);
    expect((await storedRecords()).map((record) => record.data)).toEqual([
      { name: 'Ada', age: '36', note: 'likes "quotes", commas' },
      { name: 'Grace', note: 'two\nlines' },
      { name: 'Linus', age: '55' },
    ]);
    expect(await createdEvents()).toHaveLength(3);
  });

  it('reads a body cut anywhere, even inside a multi-byte character', async () => {
    const rows = [{ name: 'Zoë', note: 'naïve café 😀', tags: ['ü'] }, { name: '日本語', n: 1.5 }];
    const bodies: [string, string][] = [
      [ndjson(rows), NDJSON],
      [JSON.stringify(rows), JSON_TYPE],
      ['name,note\r\nZoë,"naïve, café 😀"\r\n日本語,"two\nlines"\r\n', CSV],
    ];
    for (const [text, type] of bodies) {
      const bytes = Buffer.from(text);
      // Three-byte pieces: every multi-byte character above is split somewhere.
      const pieces = Array.from({ length: Math.ceil(bytes.length / 3) }, (_, i) => bytes.subarray(i * 3, i * 3 + 3));
      const response = await t.app.inject({
        method: 'POST',
        url: '/v1/collections/leads/import',
        headers: { cookie: `plainbase_session=${owner.cookie}`, 'x-baas-workspace': owner.workspaceId!, 'content-type': type },
        payload: Readable.from(pieces),
      });
      expect(response.json(), type).toEqual({ imported: 2, rejected: [], rejectedCount: 0 });
    }
    expect((await storedRecords()).map((record) => record.data)).toEqual([
      ...rows,
      ...rows,
      { name: 'Zoë', note: 'naïve, café 😀' },
      { name: '日本語', note: 'two\nlines' },
    ]);
  });

  it('an empty body imports nothing, in every format', async () => {
    for (const [body, type] of [['', NDJSON], ['', JSON_TYPE], [' \n', JSON_TYPE], ['[]', JSON_TYPE], ['', CSV], ['name,age\n', CSV]]) {
      const reply = await importBody(body!, type!);
      expect(reply.status, `${type} ${JSON.stringify(body)}`).toBe(200);
      expect(reply.body).toEqual({ imported: 0, rejected: [], rejectedCount: 0 });
    }
    expect(await storedRecords()).toHaveLength(0);
  });

  // -------------------------------------------------------------------------------------------
  // Import: all-or-nothing and partial

  const fiveLines = ['{"n": 1}', '{"n": 2}', '{"n": 3,', '{"n": 4}', '{"n": 5}'].join('\n');

  it('all-or-nothing (the default): a bad line 3 of 5 keeps nothing and names line 3', async () => {
    const reply = await importBody(fiveLines, NDJSON);
    const error = expectError(reply, 400, 'INVALID_REQUEST');
    expect(error.message).toMatch(/^Line 3: /);
    expect(error.details).toMatchObject({ line: 3, errors: [{ message: expect.stringMatching(/JSON/) }] });
    expect(await storedRecords()).toHaveLength(0);
    expect(await createdEvents()).toHaveLength(0);
    expect((await importBody(fiveLines, NDJSON, '?mode=all')).status).toBe(400);
  });

  it('?mode=partial keeps the 4 good lines and reports line 3 with its reason', async () => {
    const reply = await importBody(fiveLines, NDJSON, '?mode=partial');
    expect(reply.status).toBe(200);
    expect(reply.body.imported).toBe(4);
    expect(reply.body.rejectedCount).toBe(1);
    expect(reply.body.rejected).toEqual([{ line: 3, error: { code: 'INVALID_REQUEST', message: expect.stringMatching(/^Not valid JSON/) } }]);
    expect((await storedRecords()).map((record) => record.data.n)).toEqual([1, 2, 4, 5]);
    expect(await createdEvents()).toHaveLength(4);
  });

  it('refuses a line that is not a JSON object, in each format', async () => {
    const partial = await importBody('{"ok": 1}\n[1, 2]\n42\n"text"\nnull\n{"ok": 2}\n', NDJSON, '?mode=partial');
    expect(partial.body.imported).toBe(2);
    expect(partial.body.rejected.map((r: any) => [r.line, r.error.code, r.error.message])).toEqual([
      [2, 'INVALID_REQUEST', "A record's data must be a JSON object, not an array."],
      [3, 'INVALID_REQUEST', "A record's data must be a JSON object, not a number."],
      [4, 'INVALID_REQUEST', "A record's data must be a JSON object, not a string."],
      [5, 'INVALID_REQUEST', "A record's data must be a JSON object, not null."],
    ]);
    const all = await importBody('{"ok": 1}\n[1, 2]\n', NDJSON);
    expect(expectError(all, 400, 'INVALID_REQUEST').details).toMatchObject({ line: 2 });

    const array = await importBody('[{"ok": 1}, 7, {"ok": 2}]', JSON_TYPE, '?mode=partial');
    expect(array.body).toMatchObject({ imported: 2, rejectedCount: 1, rejected: [{ line: 2, error: { code: 'INVALID_REQUEST' } }] });
    const arrayAll = expectError(await importBody('[{"ok": 1}, 7]', JSON_TYPE), 400, 'INVALID_REQUEST');
    expect(arrayAll.message).toMatch(/^Item 2: /);
    expect(await storedRecords()).toHaveLength(4);
  });

  it('a broken JSON array stops the import in every mode, naming the item', async () => {
    for (const query of ['', '?mode=partial']) {
      const broken = expectError(await importBody('[{"a": 1}, {"b": [1, 2}, {"c": 3}]', JSON_TYPE, query), 400, 'INVALID_REQUEST');
      expect(broken.details).toMatchObject({ line: 2 });
      expect(broken.message).toMatch(/^Item 2: /);
    }
    const notArray = expectError(await importBody('{"a": 1}', JSON_TYPE), 400, 'INVALID_REQUEST');
    expect(notArray.message).toMatch(/array/);
    expect((await importBody('[{"a": 1}] [2]', JSON_TYPE)).status).toBe(400);
    expect(await storedRecords()).toHaveLength(0);
  });

  it('refuses text PostgreSQL cannot store (NUL, lone surrogates) as a row error on both engines', async () => {
    const body = ['{"ok": 1}', '{"bad": "a\\u0000b"}', '{"bad": "\\ud800"}', '{"fine": "a\\\\u0000b", "pair": "\\ud83d\\ude00"}'].join('\n');
    const reply = await importBody(body, NDJSON, '?mode=partial');
    expect(reply.status).toBe(200);
    expect(reply.body.imported).toBe(2);
    expect(reply.body.rejected.map((r: any) => r.line)).toEqual([2, 3]);
    expect(reply.body.rejected[0].error.message).toMatch(/NUL/);
    expect((await storedRecords())[1]!.data).toEqual({ fine: 'a\\u0000b', pair: '😀' });
  });

  it('refuses a field named __proto__ in every format (it must not slip past the schema)', async () => {
    await activateSchema({ type: 'object', required: ['name'] });
    const ndjsonReply = await importBody('{"name": "Ada"}\n{"__proto__": {"name": "x"}}\n{"name": "__proto__", "n": {"k": "\\"__proto__\\":"}}\n', NDJSON, '?mode=partial');
    expect(ndjsonReply.body).toMatchObject({ imported: 2, rejected: [{ line: 2, error: { code: 'INVALID_REQUEST', message: 'A field cannot be named "__proto__".' } }] });
    const array = await importBody('[{"name": "Ada"}, {"a": [{"__proto__": {"name": "x"}}], "name": "b"}]', JSON_TYPE, '?mode=partial');
    expect(array.body).toMatchObject({ imported: 1, rejected: [{ line: 2, error: { code: 'INVALID_REQUEST', message: 'A field cannot be named "__proto__".' } }] });
    expect((await storedRecords()).map((record) => record.data)).toEqual([{ name: 'Ada' }, { name: '__proto__', n: { k: '"__proto__":' } }, { name: 'Ada' }]);
  });

  it('caps the rejected list at 1000 and counts them all', async () => {
    const body = Array.from({ length: 1200 }, (_, i) => (i % 2 === 0 ? '[]' : `{"i": ${i}}`)).join('\n');
    const reply = await importBody(body, NDJSON, '?mode=partial');
    expect(reply.body.imported).toBe(600);
    expect(reply.body.rejectedCount).toBe(600);
    expect(reply.body.rejected).toHaveLength(600);
    const many = Array.from({ length: 2500 }, () => '[]').join('\n');
    const capped = await importBody(many, NDJSON, '?mode=partial');
    expect(capped.body).toMatchObject({ imported: 0, rejectedCount: 2500 });
    expect(capped.body.rejected).toHaveLength(1000);
    expect(capped.body.rejected[999].line).toBe(1000);
  });

  // -------------------------------------------------------------------------------------------
  // Import: the active schema

  it('checks each row against the active schema: 422 for all-or-nothing, a report for partial', async () => {
    await activateSchema(peopleSchema);
    const body = ndjson([{ name: 'Ada', age: 36 }, { name: 'Grace', age: -1 }, { age: 3 }, { name: 'Linus' }]);
    const all = expectError(await importBody(body, NDJSON), 422, 'SCHEMA_VALIDATION_FAILED');
    expect(all.message).toMatch(/^Line 2: /);
    expect(all.details).toMatchObject({ line: 2, version: 1, errors: [{ field: 'data.age' }] });
    expect(await storedRecords()).toHaveLength(0);

    const partial = await importBody(body, NDJSON, '?mode=partial');
    expect(partial.status).toBe(200);
    expect(partial.body.imported).toBe(2);
    expect(partial.body.rejected).toEqual([
      { line: 2, error: { code: 'SCHEMA_VALIDATION_FAILED', message: expect.any(String), details: { version: 1, errors: [{ field: 'data.age', message: expect.any(String) }] } } },
      { line: 3, error: { code: 'SCHEMA_VALIDATION_FAILED', message: expect.any(String), details: { version: 1, errors: [{ field: 'data.name', message: 'is required' }] } } },
    ]);
    const stored = await storedRecords();
    expect(stored.map((record) => [record.data.name, record.schemaVersion])).toEqual([['Ada', 1], ['Linus', 1]]);
  });

  it('types CSV cells by the active schema: integer, number, boolean, JSON for arrays', async () => {
    await activateSchema(peopleSchema);
    const body = [
      'name,age,vip,score,tags',
      'Ada,36,true,1.5,"[""math"",""engines""]"',
      'Grace,,FALSE,-2e3,',
      '007,7, true ,.5,[]',
      'Linus,abc,true,1,',
      'Ken,1.5,,,',
      'Rob,2,yes,,',
      'Dennis,3,,1,not json',
    ].join('\n');
    const reply = await importBody(body, CSV, '?mode=partial');
    expect(reply.status).toBe(200);
    expect(reply.body.imported).toBe(3);
    expect((await storedRecords()).map((record) => record.data)).toEqual([
      { name: 'Ada', age: 36, vip: true, score: 1.5, tags: ['math', 'engines'] },
      { name: 'Grace', vip: false, score: -2000 },
      { name: '007', age: 7, vip: true, score: 0.5, tags: [] },
    ]);
    expect(reply.body.rejected.map((r: any) => [r.line, r.error.code, r.error.details.errors[0].field])).toEqual([
      [5, 'SCHEMA_VALIDATION_FAILED', 'data.age'],
      [6, 'SCHEMA_VALIDATION_FAILED', 'data.age'],
      [7, 'SCHEMA_VALIDATION_FAILED', 'data.vip'],
      [8, 'SCHEMA_VALIDATION_FAILED', 'data.tags'],
    ]);
    expect(reply.body.rejected[0].error.message).toBe('Column age must be an integer (got "abc").');
  });

  // -------------------------------------------------------------------------------------------
  // Import: broken CSV

  it('a broken CSV line (unbalanced quote) is a 400 naming its line, in every mode, and keeps nothing', async () => {
    const body = 'name,age\nAda,36\n"Bob,30\nCy,5\nDe,6\n';
    for (const query of ['', '?mode=partial']) {
      const error = expectError(await importBody(body, CSV, query), 400, 'INVALID_REQUEST');
      expect(error.details).toMatchObject({ line: 3 });
      expect(error.message).toMatch(/^Line 3: .*quote/);
    }
    const stray = expectError(await importBody('name,age\nAda,36\n\n"Bob"x,30\n', CSV), 400, 'INVALID_REQUEST');
    expect(stray.details).toMatchObject({ line: 4 });
    expect(await storedRecords()).toHaveLength(0);
  });

  it('CSV: a row with the wrong number of cells is refused on its own; a bad header stops the import', async () => {
    const reply = await importBody('name,age\nAda,36\nGrace\nLinus,55,extra\nKen,1\n', CSV, '?mode=partial');
    expect(reply.body.imported).toBe(2);
    expect(reply.body.rejected.map((r: any) => [r.line, r.error.message])).toEqual([
      [3, 'The row has 1 cells; the header has 2.'],
      [4, 'The row has 3 cells; the header has 2.'],
    ]);
    expect(expectError(await importBody('name,,age\nAda,1,2\n', CSV), 400, 'INVALID_REQUEST').details).toMatchObject({ line: 1 });
    expect(expectError(await importBody('name,name\nAda,Bob\n', CSV), 400, 'INVALID_REQUEST').message).toMatch(/twice/);
    expect((await importBody('__proto__\nx\n', CSV)).status).toBe(400);
  });

  // -------------------------------------------------------------------------------------------
  // Import: refusals at the door

  it('refuses a content type it does not read with 415, and answers 404 for an unknown or trashed collection', async () => {
    for (const type of ['text/plain', 'application/xml', 'application/x-www-form-urlencoded', 'text/csv; charset=latin1']) {
      const error = expectError(await importBody('{"a": 1}\n', type), 415, 'UNSUPPORTED_MEDIA_TYPE');
      expect(error.message).toMatch(/application\/x-ndjson/);
    }
    const untyped = await t.app.inject({
      method: 'POST',
      url: '/v1/collections/leads/import',
      headers: { cookie: `plainbase_session=${owner.cookie}`, 'x-baas-workspace': owner.workspaceId! },
      payload: Buffer.from('{"a": 1}\n'),
    });
    expect(untyped.statusCode).toBe(415);

    expectError(await importBody('{"a": 1}\n', NDJSON, '', 'nope'), 404, 'NOT_FOUND');
    await owner.post('/v1/collections', { name: 'old' });
    expect((await owner.delete('/v1/collections/old')).status).toBe(200);
    expectError(await importBody('{"a": 1}\n', NDJSON, '', 'old'), 404, 'NOT_FOUND');
    expectError(await importBody('{"a": 1}\n', NDJSON, '?mode=some'), 400, 'INVALID_REQUEST');
    expect(await storedRecords()).toHaveLength(0);
  });

  it('needs records:create to import and records:read to export', async () => {
    await importBody('{"a": 1}\n', NDJSON);
    const viewer = await addMember(t, owner, 'viewer@example.com', 'viewer');
    const refused = await viewer.call('POST', '/v1/collections/leads/import', '{"a": 2}\n', { 'content-type': NDJSON });
    expectError(refused, 403, 'FORBIDDEN');
    const anonymous = await t.app.inject({ method: 'GET', url: '/v1/collections/leads/export' });
    expect(anonymous.statusCode).toBe(401);
    const exported = await t.app.inject({
      method: 'GET',
      url: '/v1/collections/leads/export',
      headers: { cookie: `plainbase_session=${viewer.cookie}`, 'x-baas-workspace': viewer.workspaceId! },
    });
    expect(exported.statusCode).toBe(200);
    expect(exportedLines(exported.body)).toHaveLength(1);
  });

  // -------------------------------------------------------------------------------------------
  // Export

  it('exports NDJSON: what was imported, oldest first, with its headers', async () => {
    const rows = [{ name: 'Ada', nested: { list: [1, 'two', null] } }, { name: 'Grace', 'odd key': true }, { name: 'Linus' }];
    await importBody(ndjson(rows), NDJSON);
    const stored = await storedRecords();
    const exported = await exportText();
    expect(exported.status).toBe(200);
    expect(exported.headers['content-type']).toBe('application/x-ndjson');
    expect(exported.headers['content-disposition']).toBe('attachment; filename="leads.ndjson"');
    const lines = exportedLines(exported.text);
    expect(lines).toEqual(stored.map((record) => ({ id: record.id, data: record.data, createdAt: record.createdAt, updatedAt: record.createdAt, schemaVersion: null })));
    expect(lines.map((line) => line.data)).toEqual(rows);
    expect(exported.text.endsWith('\n')).toBe(true);

    expect((await exportText('', 'nope')).status).toBe(404);
    const empty = await exportText('', 'leads');
    expect(empty.status).toBe(200);
    await owner.post('/v1/collections', { name: 'blank' });
    expect((await exportText('', 'blank')).text).toBe('');
  });

  it('exports CSV: round trip through import under a schema, and columns found without one', async () => {
    await owner.post('/v1/collections', { name: 'people' });
    await activateSchema(peopleSchema, 'people');
    const csv = ['name,age,vip,score,tags', 'Ada,36,true,1.5,"[""a"",""b""]"', '"Lovelace, Ada",,false,,', '"multi\nline",3,,,[]'].join('\r\n') + '\r\n';
    expect((await importBody(csv, CSV, '', 'people')).body.imported).toBe(3);
    const exported = await exportText('?format=csv', 'people');
    expect(exported.status).toBe(200);
    expect(exported.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(exported.headers['content-disposition']).toBe('attachment; filename="people.csv"');
    const table: string[][] = parseCsvText(exported.text);
    expect(table[0]).toEqual(['id', 'createdAt', 'updatedAt', 'name', 'age', 'vip', 'score', 'tags']);
    const stored = await storedRecords('people');
    expect(table.slice(1).map((row) => row.slice(0, 3))).toEqual(stored.map((record) => [record.id, record.createdAt, record.createdAt]));
    // The data columns are the CSV that was imported: it imports back to the same data.
    const dataColumns = table.map((row) => row.slice(3));
    const reimported = dataColumns.map((row) => row.map((cell) => (/[",\n]/.test(cell) ? `"${cell.replace(/"/g, '""')}"` : cell)).join(',')).join('\n');
    await owner.post('/v1/collections', { name: 'people_again' });
    await activateSchema(peopleSchema, 'people_again');
    expect((await importBody(reimported, CSV, '', 'people_again')).body.imported).toBe(3);
    expect((await storedRecords('people_again')).map((record) => record.data)).toEqual(stored.map((record) => record.data));

    // No schema: the columns are every top-level key, sorted; nested values are JSON text.
    await importBody(ndjson([{ nested: { x: [1] }, a: 1 }, { b: 'two, three', a: null }, { c: true }]), NDJSON);
    const found: string[][] = parseCsvText((await exportText('?format=csv')).text);
    expect(found.map((row) => row.slice(3))).toEqual([['a', 'b', 'c', 'nested'], ['1', '', '', '{"x":[1]}'], ['', 'two, three', '', ''], ['', '', 'true', '']]);

    const chosen: string[][] = parseCsvText((await exportText(`?format=csv&fields=${encodeURIComponent('data.nested.x,data.c')}`)).text);
    expect(chosen.map((row) => row.slice(3))).toEqual([['nested.x', 'c'], ['[1]', ''], ['', ''], ['', 'true']]);
    expectError(await owner.get('/v1/collections/leads/export?format=csv&fields=data.a,data.a'), 400, 'INVALID_REQUEST');
    expectError(await owner.get('/v1/collections/leads/export?format=csv&fields=name'), 400, 'INVALID_REQUEST');
    expectError(await owner.get('/v1/collections/leads/export?fields=data.a'), 400, 'INVALID_REQUEST');
    expectError(await owner.get('/v1/collections/leads/export?format=xml'), 400, 'INVALID_REQUEST');
  });

  it('exports only the records matching ?filter=, and none from the trash', async () => {
    await importBody(ndjson([{ name: 'Ada', age: 36 }, { name: 'Grace', age: 17 }, { name: 'Linus', age: 54 }, { name: 'Ken', age: '60' }]), NDJSON);
    const filtered = await exportText(`?filter=${encodeURIComponent('data.age >= 18')}`);
    expect(filtered.status).toBe(200);
    expect(exportedLines(filtered.text).map((line) => line.data.name)).toEqual(['Ada', 'Linus']);
    const csv: string[][] = parseCsvText((await exportText(`?format=csv&filter=${encodeURIComponent('data.name = "Ken" || data.age < 18')}`)).text);
    expect(csv.map((row) => row.slice(3))).toEqual([['age', 'name'], ['17', 'Grace'], ['60', 'Ken']]);
    expectError(await owner.get(`/v1/collections/leads/export?filter=${encodeURIComponent('data.age >>= 1')}`), 400, 'INVALID_REQUEST');

    const [first] = await storedRecords();
    expect((await owner.delete(`/v1/collections/leads/records/${first!.id}`)).status).toBe(200);
    expect(exportedLines((await exportText()).text).map((line) => line.data.name)).toEqual(['Grace', 'Linus', 'Ken']);
  });

  it('exports a consistent snapshot: records written while it streams are not in it', async () => {
    const rows = Array.from({ length: 3000 }, (_, i) => ({ i }));
    expect((await importBody(ndjson(rows), NDJSON)).body.imported).toBe(3000);
    const [first] = await storedRecords();

    const response = await t.app.inject({
      method: 'GET',
      url: '/v1/collections/leads/export',
      headers: { cookie: `plainbase_session=${owner.cookie}`, 'x-baas-workspace': owner.workspaceId! },
      payloadAsStream: true,
    });
    expect(response.statusCode).toBe(200);
    const stream = response.stream();
    const chunks: string[] = [];
    let wroteMeanwhile = false;
    for await (const chunk of stream) {
      chunks.push(String(chunk));
      if (!wroteMeanwhile) {
        wroteMeanwhile = true;
        // The export has started: these writes must not reach it.
        for (let n = 0; n < 5; n += 1) expect((await owner.post('/v1/collections/leads/records', { data: { late: n } })).status).toBe(201);
        expect((await owner.delete(`/v1/collections/leads/records/${first!.id}`)).status).toBe(200);
        expect((await importBody(ndjson([{ late: 'import' }]), NDJSON)).status).toBe(200);
      }
    }
    const lines = exportedLines(chunks.join(''));
    expect(lines).toHaveLength(3000);
    expect(lines.map((line) => line.data.i)).toEqual(rows.map((row) => row.i));
    expect(lines[0].id).toBe(first!.id);
    // Afterwards, a new export sees the new state.
    expect(exportedLines((await exportText()).text)).toHaveLength(3000 - 1 + 5 + 1);
  });

  it('an export abandoned by its client releases its snapshot', async () => {
    await importBody(ndjson(Array.from({ length: 3000 }, (_, i) => ({ i }))), NDJSON);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    // More abandoned exports than the PostgreSQL test pool has connections (5).
    for (let n = 0; n < 8; n += 1) {
      await new Promise<void>((resolve) => {
        const request = http.get(
          { host: '127.0.0.1', port, path: '/v1/collections/leads/export', headers: { cookie: `plainbase_session=${owner.cookie}`, 'x-baas-workspace': owner.workspaceId! } },
          (response) => response.once('data', () => { request.destroy(); resolve(); }),
        );
        request.on('error', () => resolve());
      });
    }
    // Each snapshot closes once the server sees the connection go; then nothing holds one.
    await expect.poll(async () => {
      if (engine === 'sqlite') {
        // A checkpoint that can truncate the WAL proves no reader holds an old snapshot.
        const { rows } = await sql<{ busy: number }>`pragma wal_checkpoint(TRUNCATE)`.execute(t.deps.db);
        return rows[0]!.busy === 0;
      }
      return true;
    }, { timeout: 10_000 }).toBe(true);
    for (let n = 0; n < 6; n += 1) expect(exportedLines((await exportText()).text)).toHaveLength(3000);
    expect((await owner.post('/v1/collections/leads/records', { data: { after: true } })).status).toBe(201);
  });

  // -------------------------------------------------------------------------------------------
  // Streaming end to end

  it('streams a 100,000-row NDJSON import end to end', async () => {
    const total = 100_000;
    const perChunk = 2_000;
    function* chunks() {
      for (let start = 0; start < total; start += perChunk) {
        let text = '';
        for (let i = start; i < start + perChunk; i += 1) text += `{"i":${i},"name":"person ${i}","active":${i % 2 === 0}}\n`;
        yield Buffer.from(text);
      }
    }
    const started = performance.now();
    const response = await t.app.inject({
      method: 'POST',
      url: '/v1/collections/leads/import',
      headers: { cookie: `plainbase_session=${owner.cookie}`, 'x-baas-workspace': owner.workspaceId!, 'content-type': NDJSON },
      payload: Readable.from(chunks()),
    });
    const seconds = (performance.now() - started) / 1000;
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({ imported: total, rejected: [], rejectedCount: 0 });
    console.info(`[${engine}] imported ${total} NDJSON rows in ${seconds.toFixed(2)} s: ${Math.round(total / seconds)} rows/s`);

    const count = await t.deps.db.selectFrom('records').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(total);
    const events = await t.deps.db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).where('type', '=', 'record.created').executeTakeFirstOrThrow();
    expect(Number(events.n)).toBe(total);
  }, 60_000);
});

describeEachEngine('import limits', (engine) => {
  let t: TestApp;
  let owner: Client;
  beforeEach(async () => {
    t = await startTestApp(engine, { importLimitBytes: 20_000, bodyLimitBytes: 2048 });
    owner = await signedInOwner(t);
    await owner.post('/v1/collections', { name: 'leads' });
  });
  afterEach(async () => { await t.close(); });

  const recordCount = async () => Number((await t.deps.db.selectFrom('records').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  const eventCount = async () => Number((await t.deps.db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).where('type', '=', 'record.created').executeTakeFirstOrThrow()).n);

  it('a body over PLAINBASE_IMPORT_LIMIT is a 413 and keeps nothing, declared or streamed', async () => {
    const declared = await owner.call('POST', '/v1/collections/leads/import', 'x'.repeat(20_001), { 'content-type': 'application/x-ndjson' });
    expect(expectError(declared, 413, 'PAYLOAD_TOO_LARGE').details).toEqual({ limitBytes: 20_000 });

    // No content-length: the bytes are counted as they stream, after the first batches were written.
    const line = (i: number) => `{"i":${100_000 + i}}\n`; // 13 bytes each
    function* chunks() {
      for (let start = 0; start < 2000; start += 100) yield Buffer.from(Array.from({ length: 100 }, (_, k) => line(start + k)).join(''));
    }
    const streamed = await t.app.inject({
      method: 'POST',
      url: '/v1/collections/leads/import?mode=partial',
      headers: { cookie: `plainbase_session=${owner.cookie}`, 'x-baas-workspace': owner.workspaceId!, 'content-type': 'application/x-ndjson' },
      payload: Readable.from(chunks()),
    });
    expect(streamed.statusCode).toBe(413);
    expect(streamed.json().error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(await recordCount()).toBe(0);
    expect(await eventCount()).toBe(0);

    // Just under the limit is fine.
    const fits = Array.from({ length: 1500 }, (_, i) => line(i)).join('');
    expect(fits.length).toBeLessThan(20_000);
    const ok = await owner.call('POST', '/v1/collections/leads/import', fits, { 'content-type': 'application/x-ndjson' });
    expect(ok.body).toEqual({ imported: 1500, rejected: [], rejectedCount: 0 });
    expect(await eventCount()).toBe(1500);
  });

  it('one record is held to PLAINBASE_BODY_LIMIT: a longer line is refused on its own', async () => {
    const long = JSON.stringify({ blob: 'x'.repeat(5000) });
    const body = `{"n":1}\n${long}\n{"n":2}\n`;
    const partial = await owner.call('POST', '/v1/collections/leads/import?mode=partial', body, { 'content-type': 'application/x-ndjson' });
    expect(partial.body).toMatchObject({ imported: 2, rejectedCount: 1, rejected: [{ line: 2, error: { code: 'PAYLOAD_TOO_LARGE' } }] });
    const all = await owner.call('POST', '/v1/collections/leads/import', body, { 'content-type': 'application/x-ndjson' });
    expect(expectError(all, 413, 'PAYLOAD_TOO_LARGE').details).toMatchObject({ line: 2 });

    const array = await owner.call('POST', '/v1/collections/leads/import?mode=partial', `[{"n":3}, ${long}]`, { 'content-type': 'application/json' });
    expect(array.body).toMatchObject({ imported: 1, rejected: [{ line: 2, error: { code: 'PAYLOAD_TOO_LARGE' } }] });
    const csv = await owner.call('POST', '/v1/collections/leads/import', `blob\n${'y'.repeat(5000)}\n`, { 'content-type': 'text/csv' });
    expect(expectError(csv, 413, 'PAYLOAD_TOO_LARGE').details).toMatchObject({ line: 2 });
    expect(await recordCount()).toBe(3);
  });
});
