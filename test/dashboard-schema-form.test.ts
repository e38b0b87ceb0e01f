import { describe, expect, it } from 'vitest';
import { exampleRecord } from '../web/src/pages/data/example-record.js';
import { filterFields } from '../web/src/pages/data/filter-fields.js';
import { recordFieldsSummary } from '../web/src/pages/data/record-summary.js';
import { fieldProblem, formFields } from '../web/src/pages/data/schema-form.js';
import { newestFirst } from '../web/src/ui/newest-first.js';

/** The dashboard's helpers that read a collection's active schema: the record form, the examples, the filter hint. */
describe('the record form made from a schema', () => {
  const schema = {
    type: 'object',
    properties: {
      name: { type: 'string', minLength: 1 },
      age: { type: 'integer', minimum: 0, maximum: 150 },
      email: { type: 'string', format: 'email' },
      status: { enum: ['open', 'closed'] },
      vip: { type: 'boolean' },
      tags: { type: 'array', items: { type: 'string' } },
      code: { type: ['string', 'null'], pattern: '^[A-Z]{3}$' },
    },
    required: ['name'],
  };

  it('gives each property an input of its kind, and marks the required ones', () => {
    const fields = formFields(schema)!;
    expect(fields.map((field) => [field.name, field.kind, field.required])).toEqual([
      ['name', 'text', true],
      ['age', 'integer', false],
      ['email', 'email', false],
      ['status', 'choice', false],
      ['vip', 'boolean', false],
      ['tags', 'json', false],
      ['code', 'text', false],
    ]);
    expect(formFields({ type: 'object' })).toBeNull();
    expect(formFields(null)).toBeNull();
  });

  it('gives long text a text area, dates a picker, links a URL input', () => {
    const kinds = formFields({
      type: 'object',
      properties: {
        notes: { type: 'string', 'x-long-text': true },
        story: { type: 'string', maxLength: 201 },
        short: { type: 'string', maxLength: 200 },
        born: { type: 'string', format: 'date' },
        at: { type: 'string', format: 'date-time' },
        site: { type: 'string', format: 'uri' },
      },
    })!.map((field) => [field.name, field.kind]);
    expect(kinds).toEqual([
      ['notes', 'long-text'],
      ['story', 'long-text'],
      ['short', 'text'],
      ['born', 'date'],
      ['at', 'date-time'],
      ['site', 'url'],
    ]);
  });

  it('says what is wrong the way the API does, and leaves the rest to it', () => {
    const byName = Object.fromEntries(formFields(schema)!.map((field) => [field.name, field]));
    expect(fieldProblem(byName.name!, undefined)).toBe('is required');
    expect(fieldProblem(byName.name!, '')).toBe('must not be empty');
    expect(fieldProblem(byName.age!, -1)).toBe('must be >= 0');
    expect(fieldProblem(byName.age!, 151)).toBe('must be <= 150');
    expect(fieldProblem(byName.age!, 1.5)).toBe('must be a whole number');
    expect(fieldProblem(byName.age!, undefined)).toBeNull();
    expect(fieldProblem(byName.status!, 'maybe')).toBe('must be one of the choices');
    expect(fieldProblem(byName.status!, 'open')).toBeNull();
    expect(fieldProblem(byName.code!, 'abc')).toBe('must match ^[A-Z]{3}$');
    expect(fieldProblem(byName.code!, 'ABC')).toBeNull();
  });

  it('makes an example record with a value of the right type for each property (a pattern is not guessed at)', () => {
    expect(exampleRecord(schema)).toEqual({ name: 'text', age: 1, email: 'ada@example.com', status: 'open', vip: true, tags: [], code: 'text' });
    expect(exampleRecord(null)).toEqual({ name: 'Ada' });
  });

  it("names the schema's fields in the filter hint, or the records' when there is no schema", () => {
    const record = (data: Record<string, unknown>) => ({ data });
    expect(filterFields(schema, [])).toEqual(['name', 'age', 'email', 'status', 'vip', 'tags', 'code']);
    expect(filterFields(null, [record({ city: 'Oslo', 'not nameable': 1 }), record({ zip: '0150' })])).toEqual(['city', 'zip']);
  });

  it('orders lists newest first', () => {
    const items = [{ at: '2026-01-01T00:00:00.000Z' }, { at: '2026-03-01T00:00:00.000Z' }, { at: '2026-02-01T00:00:00.000Z' }];
    expect(newestFirst(items, (item) => item.at).map((item) => item.at.slice(5, 7))).toEqual(['03', '02', '01']);
  });

  it('names a record by its fields in words for the record picker, cut to a length', () => {
    const record = (data: Record<string, unknown>) => ({ id: 'rec_x', collectionId: 'col_x', data, schemaVersion: null, files: [], createdAt: '', updatedAt: '', trashedAt: null }) as never;
    expect(recordFieldsSummary(record({ name: 'Ada', age: 36, tags: ['a'], note: '' }), 100)).toBe('name: Ada · age: 36 · tags: ["a"] · note: ');
    expect(recordFieldsSummary(record({}), 100)).toBe('(no fields)');
    expect(recordFieldsSummary(record({ name: 'x'.repeat(50) }), 10)).toBe('name: xxxx…');
  });
});
