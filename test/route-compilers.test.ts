import { describe, expect, it } from 'vitest';
import { compileValidator, schemaController } from '../src/http/route-compilers.js';

/**
 * Compiled route functions are shared by every app a process builds, keyed by schema text. No
 * database here: what is checked is that the key holds everything a compiled function depends on.
 */
describe('route compilers', () => {
  const schema = { type: 'object', properties: { n: { type: 'number' } }, additionalProperties: false };
  const validator = (httpPart: 'body' | 'querystring', text = schema) => compileValidator({ schema: text, httpPart, method: 'POST', url: '/x' });

  it('give the same function for the same schema text, even as another object', () => {
    expect(validator('body', structuredClone(schema))).toBe(validator('body'));
  });

  it('keep a body strict and a query string coerced, for one schema text', () => {
    expect(validator('body')({ n: '1' })).toBe(false);
    const query = { n: '1' };
    expect(validator('querystring')(query)).toBe(true);
    expect(query.n).toBe(1);
  });

  it('compile a serializer again when what its $ref reaches differs', () => {
    const route = { method: 'GET', url: '/x', httpStatus: '200', schema: { type: 'object', properties: { error: { $ref: 'Error#' } } } };
    const build = schemaController.compilersFactory!.buildSerializer!;
    const withCode = build({ Error: { $id: 'Error', type: 'object', properties: { code: { type: 'string' } } } }, {})(route);
    const withMessage = build({ Error: { $id: 'Error', type: 'object', properties: { message: { type: 'string' } } } }, {})(route);
    expect(withCode).not.toBe(withMessage);
    expect(withCode({ error: { code: 'A', message: 'm' } })).toBe('{"error":{"code":"A"}}');
    expect(withMessage({ error: { code: 'A', message: 'm' } })).toBe('{"error":{"message":"m"}}');
    expect(build({ Error: { $id: 'Error', type: 'object', properties: { code: { type: 'string' } } } }, {})(route)).toBe(withCode);
  });
});
