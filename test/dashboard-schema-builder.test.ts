import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { builderProblems, fieldsOfSchema, limitKeywords, hasPattern, newField, schemaOfFields, withKind, type BuilderField, type BuilderKind } from '../web/src/pages/data/schema-builder-fields.js';
import { diffSchemas, isEmptyDiff } from '../web/src/pages/data/schema-diff.js';
import { checkSchema } from '../src/modules/schemas/compile-schema.js';

const KINDS: BuilderKind[] = ['text', 'long-text', 'email', 'url', 'number', 'integer', 'boolean', 'date', 'date-time', 'choice', 'text-list', 'object'];

// Names like "0" are left out: a JavaScript object (and so JSON.parse) puts such keys first,
// whatever their place in the text, so their order is not the builder's to keep.
const name = fc
  .oneof(fc.string({ minLength: 1, maxLength: 12 }), fc.constantFrom('__proto__', 'constructor', 'required', 'properties', 'a.b'))
  .filter((text) => !/^(0|[1-9][0-9]*)$/.test(text));
const limit = fc.option(fc.integer({ min: 0, max: 10_000 }), { nil: null });

/** A field the builder can represent: only what its kind holds, set. */
const fieldOf = (depth: number): fc.Arbitrary<BuilderField> =>
  fc
    .record({
      name,
      kind: fc.constantFrom(...(depth > 0 ? KINDS : KINDS.filter((kind) => kind !== 'object'))),
      required: fc.boolean(),
      min: limit,
      max: limit,
      pattern: fc.option(fc.constantFrom('^[A-Z]{3}$', '\\d+', 'x'), { nil: null }),
      choices: fc.uniqueArray(fc.string({ maxLength: 8 }), { minLength: 1, maxLength: 4 }),
      fields: depth > 0 ? fieldsOf(depth - 1) : fc.constant<BuilderField[]>([]),
    })
    .map((field) => ({
      ...field,
      min: limitKeywords(field.kind) ? field.min : null,
      max: limitKeywords(field.kind) ? field.max : null,
      pattern: hasPattern(field.kind) ? field.pattern : null,
      choices: field.kind === 'choice' ? field.choices : [],
      fields: field.kind === 'object' ? field.fields : [],
    }));
const fieldsOf = (depth: number): fc.Arbitrary<BuilderField[]> => fc.uniqueArray(fieldOf(depth), { maxLength: 5, selector: (field) => field.name });

describe('the schema builder', () => {
  it('reads back exactly the fields it wrote (fields → schema → fields), and writes valid JSON Schema', () => {
    fc.assert(
      fc.property(fieldsOf(2), (fields) => {
        const schema = schemaOfFields(fields);
        expect(fieldsOfSchema(JSON.parse(JSON.stringify(schema)))).toEqual({ fields, problem: null });
        expect(() => checkSchema(schema)).not.toThrow();
      }),
      { numRuns: 200 },
    );
  });

  it('writes each kind as JSON Schema', () => {
    const field = (kind: BuilderKind, extra: Partial<BuilderField> = {}): BuilderField => ({ ...newField(kind), kind, ...extra });
    expect(
      schemaOfFields([
        field('text', { required: true, min: 1, max: 80, pattern: '^[a-z]+$' }),
        field('long-text'),
        field('email'),
        field('url'),
        field('integer', { min: 0 }),
        field('boolean'),
        field('date'),
        field('choice', { choices: ['open', 'closed'] }),
        field('text-list', { max: 3 }),
        field('object', { fields: [field('date-time', { required: true })] }),
      ]),
    ).toEqual({
      type: 'object',
      properties: {
        text: { type: 'string', minLength: 1, maxLength: 80, pattern: '^[a-z]+$' },
        'long-text': { type: 'string', 'x-long-text': true },
        email: { type: 'string', format: 'email' },
        url: { type: 'string', format: 'uri' },
        integer: { type: 'integer', minimum: 0 },
        boolean: { type: 'boolean' },
        date: { type: 'string', format: 'date' },
        choice: { type: 'string', enum: ['open', 'closed'] },
        'text-list': { type: 'array', items: { type: 'string' }, maxItems: 3 },
        object: { type: 'object', properties: { 'date-time': { type: 'string', format: 'date-time' } }, required: ['date-time'] },
      },
      required: ['text'],
    });
  });

  it('leaves the JSON in charge of what it cannot represent, naming why', () => {
    expect(fieldsOfSchema({ type: 'object', properties: { a: { type: 'string', const: 'x' } } }).problem).toBe('The field a uses a type or keyword the builder has no control for.');
    expect(fieldsOfSchema({ type: 'object', properties: { a: { type: 'object', properties: { b: { type: ['string', 'null'] } } } } }).problem).toBe('The field a.b uses a type or keyword the builder has no control for.');
    expect(fieldsOfSchema({ type: 'object', properties: {}, additionalProperties: false }).problem).toBe('The schema uses "additionalProperties", which the builder has no control for.');
    expect(fieldsOfSchema({ type: 'object', properties: { a: { type: 'string' } }, required: ['b'] }).problem).toMatch(/required a name that is not one of its fields/);
    expect(fieldsOfSchema({ type: 'array' }).problem).toBe('The schema is not of type "object".');
    expect(fieldsOfSchema([]).problem).toBe('The schema is not a JSON object.');
    // Key order and the order of required names do not matter.
    expect(fieldsOfSchema({ required: ['b', 'a'], properties: { a: { maxLength: 3, type: 'string' }, b: { type: 'boolean' } }, type: 'object' }).problem).toBeNull();
  });

  it('names what keeps the fields from being saved', () => {
    const fields: BuilderField[] = [
      newField(''),
      newField('a'),
      newField('a'),
      { ...withKind(newField('n'), 'integer'), min: 5, max: 1 },
      withKind(newField('c'), 'choice'),
      { ...withKind(newField('g'), 'object'), fields: [newField('')] },
    ];
    expect(builderProblems(fields)).toEqual([
      'field 1 needs a name.',
      'a is named twice.',
      'n has a minimum above its maximum.',
      'c needs at least one choice.',
      'g.field 1 needs a name.',
    ]);
    expect(builderProblems([newField('ok')])).toEqual([]);
  });

  it('keeps only what the new kind can hold when a field changes kind', () => {
    const text: BuilderField = { ...newField('t'), min: 1, max: 9, pattern: 'x' };
    expect(withKind(text, 'email')).toMatchObject({ kind: 'email', min: 1, max: 9, pattern: null });
    expect(withKind(text, 'integer')).toMatchObject({ kind: 'integer', min: null, max: null, pattern: null });
  });
});

describe('the difference between two schema versions', () => {
  it('lists fields added, removed and changed, nested ones by their path', () => {
    const before = {
      type: 'object',
      properties: { name: { type: 'string' }, age: { type: 'integer', minimum: 0 }, notes: { type: 'string' }, address: { type: 'object', properties: { city: { type: 'string' } } } },
      required: ['name'],
    };
    const after = {
      type: 'object',
      properties: {
        name: { type: 'string', maxLength: 80 },
        notes: { type: 'string', 'x-long-text': true },
        address: { type: 'object', properties: { city: { type: 'string' }, zip: { type: 'string' } }, required: ['city'] },
        vip: { type: 'boolean' },
      },
      required: ['name', 'vip'],
      additionalProperties: false,
    };
    expect(diffSchemas(before, after)).toEqual({
      added: [
        { path: 'address.zip', summary: 'Text' },
        { path: 'vip', summary: 'Yes / no, required' },
      ],
      removed: [{ path: 'age', summary: 'Whole number' }],
      changed: [
        { path: '(the record itself)', changes: ['additionalProperties (none) → false'] },
        { path: 'name', changes: ['maxLength (none) → 80'] },
        { path: 'notes', changes: ['kind Text → Long text'] },
        { path: 'address.city', changes: ['now required'] },
      ],
    });
    expect(isEmptyDiff(diffSchemas(after, JSON.parse(JSON.stringify(after))))).toBe(true);
  });

  it('reads any JSON without failing', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        expect(() => diffSchemas(a, b)).not.toThrow();
      }),
    );
  });
});
