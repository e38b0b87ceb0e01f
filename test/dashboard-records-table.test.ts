import { describe, expect, it } from 'vitest';
import { cellKind } from '../web/src/pages/data/cell-kind.js';
import { idFilter } from '../web/src/pages/data/id-filter.js';

/** The records table's helpers: how a cell is edited in place, and the filter naming selected rows. */
describe('the records table', () => {
  const schema = {
    type: 'object',
    properties: {
      name: { type: 'string' },
      age: { type: 'integer' },
      score: { type: ['number', 'null'] },
      vip: { type: 'boolean' },
      plan: { enum: ['free', 'pro', null] },
      address: { type: 'object' },
      either: { type: ['string', 'number'] },
      tags: { enum: [['a'], ['b']] },
    },
  };

  it("edits a field with the input of the schema's type, and leaves objects, lists and mixed types to the record's editor", () => {
    expect(cellKind(schema, 'name', 'Ada')).toEqual({ kind: 'text', choices: [] });
    expect(cellKind(schema, 'age', 36)).toEqual({ kind: 'integer', choices: [] });
    expect(cellKind(schema, 'score', null)).toEqual({ kind: 'number', choices: [] });
    expect(cellKind(schema, 'vip', undefined)).toEqual({ kind: 'boolean', choices: [] });
    expect(cellKind(schema, 'plan', 'pro')).toEqual({ kind: 'choice', choices: ['free', 'pro', null] });
    for (const field of ['address', 'either', 'tags']) expect(cellKind(schema, field, undefined), field).toBeNull();
  });

  it('reads the value itself when the schema does not name the field, or there is no schema', () => {
    expect(cellKind(schema, 'note', 'hello')).toEqual({ kind: 'text', choices: [] });
    expect(cellKind(null, 'n', 4.5)).toEqual({ kind: 'number', choices: [] });
    expect(cellKind(null, 'ok', false)).toEqual({ kind: 'boolean', choices: [] });
    expect(cellKind(null, 'missing', undefined)).toEqual({ kind: 'text', choices: [] });
    expect(cellKind(null, 'list', [1, 2])).toBeNull();
    expect(cellKind(null, 'object', { a: 1 })).toBeNull();
    // A key from the prototype is not a property of the schema.
    expect(cellKind(schema, 'toString', 'x')).toEqual({ kind: 'text', choices: [] });
  });

  it('names the selected records with a filter of quoted ids', () => {
    expect(idFilter(['rec_1', 'rec_2'])).toBe('id in ["rec_1", "rec_2"]');
    expect(idFilter(['a"b'])).toBe('id in ["a\\"b"]');
  });
});
