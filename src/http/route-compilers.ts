import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler, FastifyServerOptions } from 'fastify';

/**
 * How route schemas become functions: validators for what comes in, serializers for what goes out.
 *
 * Both are compiled once per process for each distinct schema text and shared by every app the
 * process builds. Compiling is most of what building an app costs (about 0.2 s for this API's
 * routes, Ajv and fast-json-stringify generating code); a server builds one app, but the test
 * suite builds a thousand. A compiled function depends only on its schema text and the options
 * below, so sharing it changes no answer.
 */

/**
 * Fastify's default Ajv drops unknown fields and coerces types in bodies; we refuse both, so a
 * misspelt field or a string where a number belongs is a 400 naming it. Query strings and path
 * parameters are text on the wire, so those are coerced.
 */
// ownProperties: a body's fields are its own; nothing on a prototype counts as sent.
const common = { allErrors: false, useDefaults: true, removeAdditional: false, strict: false, ownProperties: true } as const;
const bodyAjv = addFormats.default(new Ajv.default({ ...common, coerceTypes: false }));
const textAjv = addFormats.default(new Ajv.default({ ...common, coerceTypes: 'array' }));

type Validator = ReturnType<FastifySchemaCompiler<unknown>>;
const validators = new Map<string, Validator>();

export const compileValidator: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : textAjv;
  return once(validators, `${httpPart === 'body' ? 'body' : 'text'}:${JSON.stringify(schema)}`, () => ajv.compile(schema as object) as Validator);
};

type Serializer = (payload: unknown) => string;
const serializers = new Map<string, Serializer>();
const compileWithFastJsonStringify = SerializerSelector();

/** The schema controller option: fast-json-stringify, as Fastify's default, compiled once per schema text. */
export const schemaController: NonNullable<FastifyServerOptions['schemaController']> = {
  compilersFactory: {
    buildSerializer: (externalSchemas, options) => {
      const compile = compileWithFastJsonStringify(externalSchemas, options);
      // What `$ref`s can reach and the options are part of what a serializer is compiled from.
      const context = JSON.stringify([externalSchemas ?? null, options ?? null]);
      return (route) => once(serializers, `${context}\n${JSON.stringify(route.schema)}`, () => compile(route));
    },
  },
};

function once<T>(compiled: Map<string, T>, key: string, compile: () => T): T {
  let value = compiled.get(key);
  if (value === undefined) {
    value = compile();
    compiled.set(key, value);
  }
  return value;
}
