import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { invalidRequest } from '../../errors.js';

/**
 * JSON Schema 2020-12 through Ajv. A schema version never changes once created, so its compiled
 * validator is kept by version id and each version is compiled once per process.
 */
// ownProperties: `required: ["constructor"]` must not be met by Object.prototype.constructor.
const ajv = addFormats.default(new Ajv2020({ allErrors: true, strict: false, validateFormats: true, ownProperties: true }));
const compiled = new Map<string, ValidateFunction>();
const MAX_CACHED = 1000;

/** Checks that a schema is valid JSON Schema 2020-12 and compiles; throws a 400 saying why. */
export function checkSchema(schema: unknown): void {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw invalidRequest('The schema must be a JSON Schema object.', { field: 'body.schema' });
  }
  if (!ajv.validateSchema(schema)) {
    const errors = (ajv.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message}`);
    throw invalidRequest(`The schema is not valid JSON Schema 2020-12: ${errors[0]}.`, { field: 'body.schema', errors });
  }
  try {
    ajv.compile(stripId(schema as Record<string, unknown>));
  } catch (error) {
    throw invalidRequest(`The schema cannot be compiled: ${(error as Error).message}.`, { field: 'body.schema' });
  }
}

export function validatorFor(versionId: string, schema: Record<string, unknown>): ValidateFunction {
  let validate = compiled.get(versionId);
  if (!validate) {
    if (compiled.size >= MAX_CACHED) compiled.delete(compiled.keys().next().value!);
    validate = ajv.compile(stripId(schema));
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
