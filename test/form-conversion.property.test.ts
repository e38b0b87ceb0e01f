import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from '../src/errors.js';
import { checkRedirect, formFieldsToData, readUrlencoded, redirectWithError, splitReservedFields, type FormField } from '../src/http/form-submission.js';
import { unstorableTextReason } from '../src/storable-text.js';
import { expectPrototypesUntouched } from './support/untouched-prototypes.js';

/**
 * How a form's text becomes record data, attacked with generated input: whatever is sent, the
 * answer is data or a 4xx AppError (never another exception), a number field never keeps a
 * string, and no field name reaches a prototype.
 */

const RUNS = { numRuns: 300 };

/** Any field name a form can carry, the prototype's own names among them. */
const fieldName = fc.oneof(
  fc.string({ minLength: 1, maxLength: 20 }),
  fc.constantFrom('constructor', 'prototype', 'toString', 'hasOwnProperty', '__defineGetter__', 'valueOf', 'a[b]', 'a.b', '0', 'length'),
);
const fields = fc.array(fc.tuple(fieldName, fc.string({ maxLength: 30, unit: 'binary' })), { maxLength: 20 });

/** Calls `run`, and answers the AppError it threw, or null; any other exception fails the test. */
function refusal(run: () => unknown): AppError | null {
  try {
    run();
    return null;
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).status).toBeGreaterThanOrEqual(400);
    expect((error as AppError).status).toBeLessThan(500);
    return error as AppError;
  }
}

const schema = (properties: Record<string, unknown>) => ({ type: 'object', properties });

describe('form fields to data', () => {
  it('without a schema: every field is text, a repeated one an array in the order sent, all as own data', () => {
    fc.assert(
      fc.property(fields, (sent) => {
        const usable = sent.filter(([name]) => !(name in Object.prototype));
        const data = formFieldsToData(usable, null);
        expect(Object.getPrototypeOf(data)).toBeNull();
        const expected = new Map<string, string[]>();
        for (const [name, value] of usable) expected.set(name, [...(expected.get(name) ?? []), value]);
        expect(Object.keys(data).sort()).toEqual([...expected.keys()].sort());
        for (const [name, values] of expected) expect(data[name]).toEqual(values.length === 1 ? values[0] : values);
        expectPrototypesUntouched();
      }),
      RUNS,
    );
  });

  it('refuses a field named as a property of every object (400), in data and in urlencoded bodies', () => {
    for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', '__defineGetter__', 'valueOf']) {
      expect(refusal(() => formFieldsToData([['a', '1'], [name, 'x']], null))?.code, name).toBe('INVALID_REQUEST');
      expect(refusal(() => readUrlencoded(`a=1&${name}=x`))?.code, name).toBe('INVALID_REQUEST');
    }
    expect(refusal(() => formFieldsToData([['__proto__', 'x']], schema({ __proto__: { type: 'integer' } })))?.code).toBe('INVALID_REQUEST');
    expect({ ...formFieldsToData([['prototype', 'p'], ['length', '1']], null) }).toEqual({ prototype: 'p', length: '1' });
    expectPrototypesUntouched();
  });

  it('an integer field is a whole number or a 422, never a string', () => {
    const integerSchema = schema({ n: { type: 'integer' } });
    fc.assert(
      fc.property(fc.maxSafeInteger(), (n) => {
        expect(formFieldsToData([['n', String(n)]], integerSchema).n).toBe(n);
        expect(formFieldsToData([['n', ` ${n} `]], integerSchema).n).toBe(n);
      }),
      RUNS,
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 30 }), (text) => {
        const error = refusal(() => formFieldsToData([['n', text]], integerSchema));
        if (error) {
          expect(error.code).toBe('SCHEMA_VALIDATION_FAILED');
          expect(error.details).toEqual({ errors: [{ field: 'data.n', message: 'is not a whole number' }] });
          return;
        }
        const { n } = formFieldsToData([['n', text]], integerSchema);
        // Left out when empty, else a safe integer.
        if (text.trim() === '') expect(n).toBeUndefined();
        else expect(Number.isSafeInteger(n)).toBe(true);
      }),
      RUNS,
    );
    for (const text of ['1.5', '1e3', '0x10', '9007199254740993', 'NaN', '١٢', '1_000', '--1', 'Infinity']) {
      expect(refusal(() => formFieldsToData([['n', text]], integerSchema))?.code, text).toBe('SCHEMA_VALIDATION_FAILED');
    }
  });

  it('a number field is the number the text says, or a 422', () => {
    const numberSchema = schema({ x: { type: ['number', 'null'] } });
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
        expect(formFieldsToData([['x', String(x)]], numberSchema).x).toBe(x === 0 ? 0 : x);
      }),
      RUNS,
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 30 }), (text) => {
        const error = refusal(() => formFieldsToData([['x', text]], numberSchema));
        if (error) {
          expect(error.code).toBe('SCHEMA_VALIDATION_FAILED');
          return;
        }
        const { x } = formFieldsToData([['x', text]], numberSchema);
        if (text.trim() === '') expect(x).toBeNull();
        else expect(Number.isFinite(x)).toBe(true);
      }),
      RUNS,
    );
    for (const text of ['1e400', '-1e999', 'Infinity', '0b1', '1,5', '.', '+']) {
      expect(refusal(() => formFieldsToData([['x', text]], numberSchema))?.code, text).toBe('SCHEMA_VALIDATION_FAILED');
    }
  });

  it('a boolean is true for on/true/1, false for off/false/0/empty or when left out, else a 422', () => {
    const booleanSchema = schema({ ok: { type: 'boolean' }, other: { type: 'string' } });
    const cased = (word: string) => fc.array(fc.boolean(), { minLength: word.length, maxLength: word.length }).map((upper) => [...word].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join(''));
    fc.assert(
      fc.property(fc.oneof(cased('on'), cased('true'), fc.constant('1')), (text) => {
        expect(formFieldsToData([['ok', text]], booleanSchema).ok).toBe(true);
      }),
      RUNS,
    );
    fc.assert(
      fc.property(fc.oneof(cased('off'), cased('false'), fc.constant('0'), fc.constant('')), (text) => {
        expect(formFieldsToData([['ok', text]], booleanSchema).ok).toBe(false);
      }),
      RUNS,
    );
    expect(formFieldsToData([['other', 'x']], booleanSchema)).toEqual(Object.assign(Object.create(null), { other: 'x', ok: false }));
    fc.assert(
      fc.property(fc.string({ maxLength: 10 }).filter((text) => !['on', 'true', '1', 'off', 'false', '0', ''].includes(text.trim().toLowerCase())), (text) => {
        expect(refusal(() => formFieldsToData([['ok', text]], booleanSchema))?.code).toBe('SCHEMA_VALIDATION_FAILED');
      }),
      RUNS,
    );
  });

  it('an array field takes every value, converted by its items; a single-valued field sent twice is a 422', () => {
    const arraySchema = schema({ tags: { type: 'array', items: { type: 'string' } }, ns: { type: 'array', items: { type: 'integer' } }, one: { type: 'string' } });
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 10 }), { minLength: 1, maxLength: 8 }), fc.array(fc.integer(), { maxLength: 8 }), (tags, ns) => {
        const sent: FormField[] = [...tags.map((tag): FormField => ['tags', tag]), ...ns.map((n): FormField => ['ns', String(n)])];
        const data = formFieldsToData(sent, arraySchema);
        expect(data.tags).toEqual(tags);
        if (ns.length > 0) expect(data.ns).toEqual(ns);
      }),
      RUNS,
    );
    expect(refusal(() => formFieldsToData([['one', 'a'], ['one', 'b']], arraySchema))?.code).toBe('SCHEMA_VALIDATION_FAILED');
    expect(refusal(() => formFieldsToData([['ns', '1'], ['ns', 'two']], arraySchema))?.details).toEqual({ errors: [{ field: 'data.ns', message: 'is not a whole number' }] });
  });

  it('reads only the schema\'s own properties, whatever the schema holds', () => {
    // A hostile or odd schema: properties that are not objects, types that are not strings.
    const odd = { type: 'object', properties: { a: null, b: 7, c: { type: 42 }, d: { type: ['integer', 3] }, e: { type: 'array', items: 'x' } } };
    expect({ ...formFieldsToData([['a', '1'], ['b', '2'], ['c', '3'], ['d', '4'], ['e', '5']], odd) }).toEqual({ a: '1', b: '2', c: '3', d: 4, e: ['5'] });
    for (const weird of [null, 'schema', [], { properties: [] }, { properties: 'x' }]) expect({ ...formFieldsToData([['a', '1']], weird) }).toEqual({ a: '1' });
    expectPrototypesUntouched();
  });
});

describe('reserved fields', () => {
  it('are never data: redirect, the CAPTCHA tokens and the honeypot come out, whatever else is sent', () => {
    fc.assert(
      fc.property(fields, fc.string({ maxLength: 10 }), (sent, trap) => {
        const honeypot = 'website';
        const withReserved: FormField[] = [...sent, ['cf-turnstile-response', 'tok'], ['h-captcha-response', ''], ['captchaToken', 'later'], [honeypot, trap]];
        const redirects = sent.filter(([name]) => name === 'redirect').length;
        // splitReservedFields takes any names: refusing prototype names is the readers' and formFieldsToData's.
        const error = refusal(() => splitReservedFields(withReserved, honeypot));
        if (redirects > 1) {
          expect(error?.code).toBe('INVALID_REQUEST');
          return;
        }
        const parts = splitReservedFields(withReserved, honeypot);
        expect(parts.fields.map(([name]) => name)).not.toContain('redirect');
        for (const name of ['cf-turnstile-response', 'h-captcha-response', 'captchaToken', honeypot]) expect(parts.fields.map(([field]) => field)).not.toContain(name);
        const firstToken = withReserved.find(([name, value]) => ['cf-turnstile-response', 'h-captcha-response', 'captchaToken'].includes(name) && value !== '');
        expect(parts.captchaToken).toBe(firstToken![1]);
        expect(parts.honeypotFilled).toBe(withReserved.some(([name, value]) => name === honeypot && value !== ''));
      }),
      RUNS,
    );
  });
});

describe('redirects', () => {
  const origins = ['https://example.com', 'http://localhost:8080'];

  it('go only to a listed origin; anything else is a 400, never another exception', () => {
    fc.assert(
      fc.property(fc.oneof(fc.webUrl({ withQueryParameters: true, withFragments: true }), fc.string({ maxLength: 60 }), fc.constantFrom('javascript:alert(1)', '//example.com', 'https://example.com@evil.test/', 'https://user:pw@example.com/', 'https://example.com.evil.test/', 'data:text/html,hi')), (raw) => {
        const error = refusal(() => checkRedirect(raw, origins));
        if (error) {
          expect(error.code).toBe('INVALID_REQUEST');
          return;
        }
        expect(origins).toContain(new URL(raw).origin);
      }),
      RUNS,
    );
    expect(checkRedirect('https://example.com/thanks?x=1#top', origins).toString()).toBe('https://example.com/thanks?x=1#top');
    expect(checkRedirect('HTTPS://EXAMPLE.COM:443/thanks', origins).toString()).toBe('https://example.com/thanks');
    expect(checkRedirect('https://anything.test/', ['*']).origin).toBe('https://anything.test');
  });

  it('add the refusal\'s code to the query, keeping what was there', () => {
    expect(redirectWithError(new URL('https://example.com/thanks?ref=a&error=old#top'), 'CAPTCHA_FAILED')).toBe('https://example.com/thanks?ref=a&error=CAPTCHA_FAILED#top');
  });
});

describe('urlencoded bodies', () => {
  it('read back what a browser encodes, and refuse only with a 4xx', () => {
    fc.assert(
      fc.property(fields, (sent) => {
        const body = new URLSearchParams(sent.map(([name, value]) => [name, value])).toString();
        const error = refusal(() => readUrlencoded(body));
        if (error) {
          // Only for text no engine stores (NUL), or a name every object has.
          expect(sent.some(([name, value]) => unstorableTextReason(name) || unstorableTextReason(value) || name in Object.prototype)).toBe(true);
          return;
        }
        const read = readUrlencoded(body);
        expect(read).toEqual(sent.map(([name, value]) => [name, value]));
      }),
      RUNS,
    );
    fc.assert(fc.property(fc.string({ maxLength: 200 }), (raw) => void refusal(() => readUrlencoded(raw))), RUNS);
    expect(readUrlencoded('a=1&a=2&b=%E2%9C%93&c=x+y&d')).toEqual([['a', '1'], ['a', '2'], ['b', '✓'], ['c', 'x y'], ['d', '']]);
    expect(refusal(() => readUrlencoded('a=%00'))?.code).toBe('INVALID_REQUEST');
    expect(refusal(() => readUrlencoded('=x'))?.code).toBe('INVALID_REQUEST');
    expect(refusal(() => readUrlencoded(Array.from({ length: 101 }, (_, i) => `f${i}=1`).join('&')))?.code).toBe('PAYLOAD_TOO_LARGE');
    expect(refusal(() => readUrlencoded(`a=${'x'.repeat(64 * 1024 + 1)}`))?.code).toBe('PAYLOAD_TOO_LARGE');
  });
});
