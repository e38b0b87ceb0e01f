import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import RE2 from 're2';
import { conflict, invalidRequest } from '../../errors.js';
import { LruMap } from '../../lru-map.js';

/**
 * JSON Schema 2020-12 through Ajv. A schema version never changes once created, so its compiled
 * validator is kept by version id and each version is compiled once per process (while kept).
 *
 * The schema's `pattern` and `patternProperties` are the caller's regular expressions, run on
 * every record written: Ajv compiles them with RE2 (its `code.regExp` option), which matches in
 * time linear in the text, so no pattern can stall the process (`^(a+)+$` against "aaaa…!" is
 * as quick as any). RE2 has no backreferences and no lookaround; a schema using them is refused
 * when it is created, naming the pattern. The `format` checks of ajv-formats are our own code and
 * keep JavaScript's RegExp.
 */

/** Validators kept compiled, by schema version id. */
const MAX_CACHED = 1000;

/**
 * Compiles on one Ajv instance before a fresh one takes over. Ajv keeps everything it compiled:
 * its cache holds each schema object compiled (a new object for every compile here), and its
 * scope every pattern; removing a schema does not empty the scope. So an instance is retired after
 * this many compiles and dropped by the garbage collector once the validators it made have left
 * the cache: memory stays bounded however many distinct schemas are compiled. A new instance
 * costs about 6 ms (its meta-schema compiled at the first check), one compile about 0.5 ms.
 */
const COMPILES_PER_INSTANCE = 200;

/** A pattern RE2 cannot compile, as Ajv meets it while compiling a schema. */
class UnsupportedPattern extends Error {
  constructor(readonly pattern: string, readonly reason: string) {
    super(`pattern ${JSON.stringify(pattern)}: ${reason}`);
  }
}

/** Ajv's regExp engine: RE2, with a refusal that names the pattern. */
const linearRegExp = Object.assign(
  (pattern: string, flags: string): RE2 => {
    try {
      return new RE2(pattern, flags);
    } catch (error) {
      throw new UnsupportedPattern(pattern, (error as Error).message);
    }
  },
  // Ajv writes this into standalone validator code only, which is never generated here.
  { code: 'new RE2' },
);

// ownProperties: `required: ["constructor"]` must not be met by Object.prototype.constructor.
const newAjv = () =>
  addFormats.default(new Ajv2020({ allErrors: true, strict: false, validateFormats: true, ownProperties: true, addUsedSchema: false, code: { regExp: linearRegExp } }));

let ajv = newAjv();
let compilesOnInstance = 0;

/** The instance to compile on now (see COMPILES_PER_INSTANCE). */
function compiler(): Ajv2020 {
  if (compilesOnInstance >= COMPILES_PER_INSTANCE) {
    ajv = newAjv();
    compilesOnInstance = 0;
  }
  compilesOnInstance += 1;
  return ajv;
}

const compiled = new LruMap<string, ValidateFunction>(MAX_CACHED);

/** Checks that a schema is valid JSON Schema 2020-12 and compiles; throws a 400 saying why. */
export function checkSchema(schema: unknown): void {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw invalidRequest('The schema must be a JSON Schema object.', { field: 'body.schema' });
  }
  const instance = compiler();
  if (!instance.validateSchema(schema)) {
    const errors = (instance.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message}`);
    throw invalidRequest(`The schema is not valid JSON Schema 2020-12: ${errors[0]}.`, { field: 'body.schema', errors });
  }
  try {
    instance.compile(stripId(schema as Record<string, unknown>));
  } catch (error) {
    if (error instanceof UnsupportedPattern) {
      throw invalidRequest(
        `The schema's pattern ${JSON.stringify(error.pattern)} is not supported (${error.reason}): patterns are RE2 expressions, matched in linear time, without backreferences or lookaround.`,
        { field: 'body.schema', pattern: error.pattern, reason: error.reason },
      );
    }
    throw invalidRequest(`The schema cannot be compiled: ${(error as Error).message}.`, { field: 'body.schema' });
  }
}

/**
 * The validator of a stored schema version. A version stored before patterns were RE2 may hold one
 * RE2 cannot run: the collection cannot check records against it, and says so (409), until
 * another version is activated or this one is switched off.
 */
export function validatorFor(versionId: string, schema: Record<string, unknown>): ValidateFunction {
  let validate = compiled.get(versionId);
  if (!validate) {
    try {
      validate = compiler().compile(stripId(schema));
    } catch (error) {
      if (!(error instanceof UnsupportedPattern)) throw error;
      throw conflict(
        `This schema version's pattern ${JSON.stringify(error.pattern)} is not supported (${error.reason}): patterns are RE2 expressions, without backreferences or lookaround. Activate another version, or switch this one off.`,
        { pattern: error.pattern, reason: error.reason },
      );
    }
    compiled.set(versionId, validate);
  }
  return validate;
}

// Ajv registers schemas by $id; two collections using the same $id must not collide.
function stripId(schema: Record<string, unknown>): Record<string, unknown> {
  const { $id: _ignored, ...rest } = schema;
  return rest;
}

/** Each failing field as `data.age`-style paths, for 422 details. */
export function describeErrors(errors: ErrorObject[] | null | undefined): { field: string; message: string }[] {
  return (errors ?? []).map((error) => {
    const segments = error.instancePath.split('/').filter(Boolean).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    const missing = error.params && 'missingProperty' in error.params ? String(error.params.missingProperty) : null;
    const extra = error.params && 'additionalProperty' in error.params ? String(error.params.additionalProperty) : null;
    if (missing) segments.push(missing);
    if (extra) segments.push(extra);
    const message = missing ? 'is required' : extra ? 'is not allowed by the schema' : (error.message ?? 'is not valid');
    return { field: ['data', ...segments].join('.'), message };
  });
}
