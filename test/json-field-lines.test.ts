import { describe, expect, it } from 'vitest';
import { fieldLines, lineAt, lineOfField } from '../web/src/pages/data/json-field-lines.js';

/** The record editor puts each schema error beside the line of its field (web/src/pages/data/RecordEditor.tsx). */
describe('json field lines', () => {
  const text = [
    '{', //                           0
    '  "name": "Ada",', //            1
    '  "address": {', //              2
    '    "city": "London",', //       3
    '    "zip": null', //             4
    '  },', //                        5
    '  "tags": [', //                 6
    '    "red",', //                  7
    '    {"deep": [1, 2]}', //        8
    '  ],', //                        9
    '  "with \\"quote\\" and, comma": 1,', // 10
    '  "multi": "a:b{c}[d]"', //      11
    '}',
  ].join('\n');

  it('finds keys, nested keys and array items by line', () => {
    const lines = fieldLines(text);
    expect(lines.get('data')).toBe(0);
    expect(lines.get('data.name')).toBe(1);
    expect(lines.get('data.address')).toBe(2);
    expect(lines.get('data.address.city')).toBe(3);
    expect(lines.get('data.address.zip')).toBe(4);
    expect(lines.get('data.tags')).toBe(6);
    expect(lines.get('data.tags.0')).toBe(7);
    expect(lines.get('data.tags.1')).toBe(8);
    expect(lines.get('data.tags.1.deep')).toBe(8);
    expect(lines.get('data.with "quote" and, comma')).toBe(10);
    expect(lines.get('data.multi')).toBe(11);
    expect(lines.has('data.b')).toBe(false);
  });

  it('puts a field it cannot find on its nearest parent (a missing required field), else on the first line', () => {
    const lines = fieldLines(text);
    expect(lineOfField(lines, 'data.address.country')).toBe(2);
    expect(lineOfField(lines, 'data.email')).toBe(0);
    expect(lineOfField(new Map(), 'data.x')).toBe(0);
  });

  it('copes with broken text and counts lines of a position', () => {
    const lines = fieldLines('{\n  "a": {\n    "b": ');
    expect(lines.get('data.a.b')).toBe(2);
    expect(lineAt('a\nb\nc', 4)).toBe(2);
    expect(lineAt('a\nb', 99)).toBe(1);
  });
});
