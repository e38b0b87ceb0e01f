import { parse as parseCsvText } from 'csv-parse/sync';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { signedInOwner, type Client } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/**
 * CSV export and formula injection (issue 14, item 11). One workspace is enough: what is checked
 * is the text of one export and what its re-import stores.
 */
describeEachEngine('CSV injection', (engine) => {
  let t: TestApp;
  let owner: Client;
  beforeEach(async () => {
    t = await startTestApp(engine);
    owner = await signedInOwner(t);
    await owner.post('/v1/collections', { name: 'sheet' });
    await owner.post('/v1/collections', { name: 'again' });
  });
  afterEach(async () => { await t.close(); });

  const exportCsv = async (collection: string) => {
    const response = await t.app.inject({
      method: 'GET',
      url: `/v1/collections/${collection}/export?format=csv&fields=data.value`,
      headers: { cookie: `plainbase_session=${owner.cookie}`, 'x-baas-workspace': owner.workspaceId! },
    });
    expect(response.statusCode).toBe(200);
    return response.body;
  };

  // [stored value, the cell as exported]
  const CASES: [unknown, string][] = [
    ['=1+1', "'=1+1"],
    ['=HYPERLINK("http://evil.example","click")', '\'=HYPERLINK("http://evil.example","click")'],
    ['+SUM(A1:A2)', "'+SUM(A1:A2)"],
    ['-2+3+cmd|\' /C calc\'!A0', "'-2+3+cmd|' /C calc'!A0"],
    ['@SUM(1)', "'@SUM(1)"],
    ['\t=1+1', "'\t=1+1"],
    ['\r=1+1', "'\r=1+1"],
    ['-', "'-"],
    // Plain numbers are no formulas, as text or as numbers.
    ['-5', '-5'],
    ['+1.5e3', '+1.5e3'],
    [-3.25, '-3.25'],
    // A formula sign later in the cell is harmless.
    ['a=1', 'a=1'],
    ["'=already quoted", "'=already quoted"],
  ];

  it('puts a single quote before cells a spreadsheet would run, and says what a re-import keeps', async () => {
    for (const [value] of CASES) expect((await owner.post('/v1/collections/sheet/records', { data: { value } })).status).toBe(201);
    const text = await exportCsv('sheet');
    const rows = parseCsvText(text, { relax_column_count: false }) as string[][];
    expect(rows[0]).toEqual(['id', 'createdAt', 'updatedAt', 'value']);
    expect(rows.slice(1).map((row) => row[3])).toEqual(CASES.map(([, cell]) => cell));
    // No cell of the file starts a formula.
    const number = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
    for (const row of rows) for (const cell of row) expect(/^[=+\-@\t\r]/.test(cell) && !number.test(cell), cell).toBe(false);

    // The NDJSON export is the lossless one: values exactly as stored.
    const ndjson = await t.app.inject({ method: 'GET', url: '/v1/collections/sheet/export?format=ndjson', headers: { cookie: `plainbase_session=${owner.cookie}`, 'x-baas-workspace': owner.workspaceId! } });
    expect(ndjson.body.trim().split('\n').map((line) => JSON.parse(line).data.value)).toEqual(CASES.map(([value]) => value));

    // A CSV re-import takes each cell as written: the quote stays (docs/import-export.md).
    const imported = await owner.call('POST', '/v1/collections/again/import', text.replace(/^id,createdAt,updatedAt,/, 'id_,created,updated,'), { 'content-type': 'text/csv' });
    expect(imported.body).toMatchObject({ imported: CASES.length, rejectedCount: 0 });
    const values = (await owner.get('/v1/collections/again/records?limit=1000')).body.data.map((record: { data: { value: string } }) => record.data.value);
    expect(values).toEqual(CASES.map(([, cell]) => cell));
  });

  it('quotes a header named like a formula too', async () => {
    await owner.post('/v1/collections/sheet/records', { data: { '=cmd': 'x', plain: '=2' } });
    const response = await t.app.inject({ method: 'GET', url: '/v1/collections/sheet/export?format=csv', headers: { cookie: `plainbase_session=${owner.cookie}`, 'x-baas-workspace': owner.workspaceId! } });
    const rows = parseCsvText(response.body) as string[][];
    expect(rows[0]).toEqual(['id', 'createdAt', 'updatedAt', "'=cmd", 'plain']);
    expect(rows[1]!.slice(3)).toEqual(['x', "'=2"]);
  });
});
