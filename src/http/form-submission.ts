import type { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, invalidRequest } from '../errors.js';
import { unstorableTextReason } from '../storable-text.js';

/**
 * Public submissions sent by a plain HTML form, without JavaScript (docs/forms.md):
 * `application/x-www-form-urlencoded` and `multipart/form-data` bodies become a record's data,
 * each value converted by the type the collection's active schema gives its field, and the files
 * of a multipart form are stored and attached. A few field names are the service's own
 * (RESERVED_FIELDS, and the collection's honeypot): they steer the submission and are never stored.
 *
 * Names are flat: `a[b]` and `a.b` are fields with those very names, nothing nests. A name that is
 * a property of every object (`__proto__`, `constructor`, `toString`, …) is refused, as the
 * multipart parser refuses it, so both kinds of form take the same names; and data is built on an
 * object without a prototype besides. No field name can reach a prototype.
 */

/** Names every object answers to: refused as field names (a 400). */
const isPrototypeName = (name: string): boolean => name in Object.prototype;
const prototypeName = (name: string) =>
  invalidRequest(`A form field cannot be named ${JSON.stringify(name)}, which every object already has.`, { field: 'body' });

/** One field as sent: its name and its text. A file field's text is the stored file's id. */
export type FormField = readonly [name: string, value: string];

/** The fields that steer a submission and never become data. */
export const REDIRECT_FIELD = 'redirect';
export const CAPTCHA_TOKEN_FIELDS = ['cf-turnstile-response', 'h-captcha-response', 'captchaToken'] as const;
export const RESERVED_FIELDS: readonly string[] = [REDIRECT_FIELD, ...CAPTCHA_TOKEN_FIELDS];

/** What one form may hold. The whole body is also bounded by the route's body limit. */
export const FORM_LIMITS = {
  /** Fields that are not files. */
  fields: 100,
  /** File parts (each within PLAINBASE_FILE_MAX_BYTES). */
  files: 10,
  /** Bytes of one field's name. */
  fieldNameBytes: 200,
  /** Bytes of one field's value; all values together stay within the body limit too. */
  fieldValueBytes: 64 * 1024,
  /** Characters of a redirect URL. */
  redirectLength: 2048,
} as const;

/** What a submitted form says besides its data. */
export interface FormParts {
  /** The fields to store, in the order sent (reserved ones taken out). */
  fields: FormField[];
  /** The redirect field, if sent (not yet checked: checkRedirect). */
  redirect: string | null;
  /** The first non-empty CAPTCHA token field, if any. */
  captchaToken: string | null;
  /** Whether the honeypot field came with anything in it. */
  honeypotFilled: boolean;
}

/** Takes the reserved fields out of what a form sent. Each may come once; a second is a 400. */
export function splitReservedFields(sent: readonly FormField[], honeypot: string | null): FormParts {
  const fields: FormField[] = [];
  let redirect: string | null = null;
  let captchaToken: string | null = null;
  let honeypotFilled = false;
  let redirects = 0;
  for (const field of sent) {
    const [name, value] = field;
    if (honeypot !== null && name === honeypot) {
      if (value !== '') honeypotFilled = true;
    } else if (name === REDIRECT_FIELD) {
      redirects += 1;
      if (redirects > 1) throw invalidRequest('The form sends the redirect field more than once.', { field: `body.${REDIRECT_FIELD}` });
      redirect = value;
    } else if ((CAPTCHA_TOKEN_FIELDS as readonly string[]).includes(name)) {
      if (captchaToken === null && value !== '') captchaToken = value;
    } else {
      fields.push(field);
    }
  }
  return { fields, redirect, captchaToken, honeypotFilled };
}

/** The JSON types a schema property can declare, as far as a form's text is converted. */
type FieldKind = 'string' | 'integer' | 'number' | 'boolean';
interface FieldType {
  kind: FieldKind;
  /** Repeated fields make an array of `kind`. */
  array: boolean;
  /** An empty value stands for null. */
  nullable: boolean;
}

/**
 * Record data from a form's fields, converted by the active schema (null: no schema):
 *
 * - a field the schema does not describe (or every field, without a schema) is text as sent, and
 *   a repeated one an array of texts;
 * - `integer` and `number`: the text of a number, else 422 as any schema failure; empty: left out
 *   (null where the type allows null), so `required` decides;
 * - `boolean`: on, true, 1 are true; off, false, 0 and empty are false; anything else 422. A
 *   boolean the form leaves out is false: an unticked checkbox sends nothing;
 * - `array`: every value of the repeated field, each converted by `items`' type; one value is an
 *   array of one;
 * - `string` (or any other type): the text as sent; sent twice, 422 (one value was expected).
 *
 * The schema still checks the result; this only decides what JSON type each text becomes.
 */
export function formFieldsToData(fields: readonly FormField[], schema: unknown): Record<string, unknown> {
  const grouped = groupByName(fields);
  const properties = propertiesOf(schema);
  const data = Object.create(null) as Record<string, unknown>;
  const errors: { field: string; message: string }[] = [];
  for (const [name, values] of grouped) {
    const type = properties ? declaredType(properties, name) : null;
    try {
      const value = type ? convert(values, type) : values.length === 1 ? values[0] : values;
      if (value !== undefined) data[name] = value;
    } catch (error) {
      if (!(error instanceof NotConvertible)) throw error;
      errors.push({ field: `data.${name}`, message: error.message });
    }
  }
  if (properties) {
    for (const name of Object.keys(properties)) {
      const type = declaredType(properties, name);
      if (type?.kind === 'boolean' && !type.array && !grouped.has(name)) data[name] = false;
    }
  }
  if (errors.length > 0) {
    throw new AppError('SCHEMA_VALIDATION_FAILED', `The form does not match the collection's schema: ${errors[0]!.field} ${errors[0]!.message}.`, { errors });
  }
  return data;
}

class NotConvertible extends Error {}

function groupByName(fields: readonly FormField[]): Map<string, string[]> {
  const grouped = new Map<string, string[]>();
  for (const [name, value] of fields) {
    if (isPrototypeName(name)) throw prototypeName(name);
    const values = grouped.get(name);
    if (values) values.push(value);
    else grouped.set(name, [value]);
  }
  return grouped;
}

/** The schema's top-level `properties`, when it has them as an object. */
function propertiesOf(schema: unknown): Record<string, unknown> | null {
  if (typeof schema !== 'object' || schema === null || !Object.hasOwn(schema, 'properties')) return null;
  const properties = (schema as { properties: unknown }).properties;
  return typeof properties === 'object' && properties !== null && !Array.isArray(properties) ? (properties as Record<string, unknown>) : null;
}

/** How a property's text is converted, from its `type`; null when it declares none. */
function declaredType(properties: Record<string, unknown>, name: string): FieldType | null {
  // Own properties only: a field named `constructor` or `toString` is no schema's.
  if (!Object.hasOwn(properties, name)) return null;
  const types = typesOf(properties[name]);
  if (types.length === 0) return null;
  const nullable = types.includes('null');
  if (types.includes('array')) {
    const items = properties[name] as { items?: unknown };
    const itemTypes = typeof items === 'object' && items !== null && Object.hasOwn(items, 'items') ? typesOf(items.items) : [];
    return { kind: kindOf(itemTypes), array: true, nullable: false };
  }
  return { kind: kindOf(types), array: false, nullable };
}

function typesOf(property: unknown): string[] {
  if (typeof property !== 'object' || property === null || !Object.hasOwn(property, 'type')) return [];
  const type = (property as { type: unknown }).type;
  if (typeof type === 'string') return [type];
  return Array.isArray(type) ? type.filter((entry): entry is string => typeof entry === 'string') : [];
}

/** Text wins when a type allows text: what was sent is then kept as sent. */
function kindOf(types: string[]): FieldKind {
  if (types.length === 0 || types.includes('string')) return 'string';
  if (types.includes('number')) return 'number';
  if (types.includes('integer')) return 'integer';
  if (types.includes('boolean')) return 'boolean';
  return 'string';
}

function convert(values: string[], type: FieldType): unknown {
  if (type.array) return values.map((value) => convertOne(value, type.kind, false)).filter((value) => value !== undefined);
  if (values.length > 1) throw new NotConvertible(`was sent ${values.length} times, but the schema expects one value`);
  return convertOne(values[0]!, type.kind, type.nullable);
}

const TRUE_TEXTS = new Set(['on', 'true', '1']);
const FALSE_TEXTS = new Set(['off', 'false', '0', '']);
const INTEGER_TEXT = /^[+-]?\d+$/;
const NUMBER_TEXT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** One text as the kind; undefined: leave the field out. */
function convertOne(text: string, kind: FieldKind, nullable: boolean): unknown {
  switch (kind) {
    case 'string':
      return text;
    case 'boolean': {
      const lower = text.trim().toLowerCase();
      if (TRUE_TEXTS.has(lower)) return true;
      if (FALSE_TEXTS.has(lower)) return false;
      throw new NotConvertible('is not a yes or no (on, true, 1; off, false, 0)');
    }
    case 'integer':
    case 'number': {
      const trimmed = text.trim();
      if (trimmed === '') return nullable ? null : undefined;
      const number = Number(trimmed);
      if (kind === 'integer' && (!INTEGER_TEXT.test(trimmed) || !Number.isSafeInteger(number))) throw new NotConvertible('is not a whole number');
      if (kind === 'number' && (!NUMBER_TEXT.test(trimmed) || !Number.isFinite(number))) throw new NotConvertible('is not a number');
      // -0 is stored as 0 by JSON anyway; say so now.
      return number === 0 ? 0 : number;
    }
  }
}

/**
 * The redirect a form asked for, if its origin is one of the collection's submission origins
 * (`*` allows any): the full URL to answer 303 with. Anything else is a 400: a form cannot send
 * its visitors anywhere the collection's owner did not list (no open redirect).
 */
export function checkRedirect(raw: string, origins: readonly string[]): URL {
  const refuse = (why: string) => invalidRequest(`The redirect ${why}.`, { field: `body.${REDIRECT_FIELD}` });
  if (raw.length > FORM_LIMITS.redirectLength) throw refuse(`is longer than ${FORM_LIMITS.redirectLength} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse('is not an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw refuse('must be an http:// or https:// URL');
  if (url.username || url.password) throw refuse('must not contain credentials');
  if (!origins.includes('*') && !origins.includes(url.origin)) throw refuse(`goes to ${url.origin}, which is not one of this collection's submission origins`);
  return url;
}

/** Where to send the browser after a refusal: the redirect with `error=CODE` added to its query. */
export function redirectWithError(redirect: URL, code: string): string {
  const url = new URL(redirect);
  url.searchParams.set('error', code);
  return url.toString();
}

/** Whether a request's body is a form (urlencoded or multipart) rather than JSON. */
export function isFormBody(request: Pick<FastifyRequest, 'headers'>): 'urlencoded' | 'multipart' | null {
  const type = (request.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();
  if (type === 'application/x-www-form-urlencoded') return 'urlencoded';
  if (type === 'multipart/form-data') return 'multipart';
  return null;
}

/** The fields of an urlencoded body, checked against the limits (a field name or value too long: 413). */
export function readUrlencoded(text: string): FormField[] {
  const fields: FormField[] = [];
  for (const [name, value] of new URLSearchParams(text)) {
    if (fields.length >= FORM_LIMITS.fields) throw tooManyFields();
    checkField(name, value);
    fields.push([name, value]);
  }
  return fields;
}

/** A field's name and value: within the limits, and text both engines store. */
export function checkField(name: string, value: string): void {
  if (name === '') throw invalidRequest('A form field has no name.', { field: 'body' });
  if (Buffer.byteLength(name) > FORM_LIMITS.fieldNameBytes) throw fieldNameTooLong();
  if (Buffer.byteLength(value) > FORM_LIMITS.fieldValueBytes) throw fieldTooLarge(name);
  if (isPrototypeName(name)) throw prototypeName(name);
  const nameReason = unstorableTextReason(name);
  if (nameReason) throw invalidRequest(`A form field's name ${nameReason}.`, { field: 'body' });
  const reason = unstorableTextReason(value);
  if (reason) throw invalidRequest(`The form field ${JSON.stringify(name.slice(0, 100))} ${reason}.`, { field: `body.${name.slice(0, 100)}` });
}

const tooManyFields = () =>
  new AppError('PAYLOAD_TOO_LARGE', `The form has more than ${FORM_LIMITS.fields} fields.`, { limit: FORM_LIMITS.fields });
const tooManyFiles = () =>
  new AppError('PAYLOAD_TOO_LARGE', `The form has more than ${FORM_LIMITS.files} files.`, { limit: FORM_LIMITS.files });
const fieldNameTooLong = () =>
  invalidRequest(`A form field's name is longer than ${FORM_LIMITS.fieldNameBytes} bytes.`, { field: 'body', limit: FORM_LIMITS.fieldNameBytes });
const fieldTooLarge = (name: string) =>
  new AppError('PAYLOAD_TOO_LARGE', `The form field ${JSON.stringify(name.slice(0, 100))} is longer than ${FORM_LIMITS.fieldValueBytes} bytes.`, { field: `body.${name.slice(0, 100)}`, limit: FORM_LIMITS.fieldValueBytes });

/** A file of a multipart form, stored as it arrives; the route says how (uploadFile). */
export interface FormFilePart {
  field: string;
  name: string;
  contentType: string;
  body: Readable;
}

/**
 * The fields of a multipart form, with each file part handed to `storeFile` as it arrives (a
 * file is never buffered): its field's value becomes the stored file's id. A file input left
 * empty (no file name, no bytes) is no file. Stored files are listed in `stored` as they go in,
 * so the caller can remove them when the submission fails later.
 */
export async function readMultipart(
  request: FastifyRequest,
  options: {
    fileMaxBytes: number;
    /** Bytes of all the fields that are not files together (the files have their own limit). */
    fieldBytes: number;
    storeFile: (part: FormFilePart) => Promise<string>;
    stored: string[];
  },
): Promise<FormField[]> {
  const fields: FormField[] = [];
  let files = 0;
  let fieldBytes = 0;
  try {
    const parts = request.parts({
      limits: {
        fields: FORM_LIMITS.fields,
        files: FORM_LIMITS.files,
        // One past each limit: busboy cuts silently at its limit; the checks here refuse.
        fieldNameSize: FORM_LIMITS.fieldNameBytes + 1,
        fieldSize: FORM_LIMITS.fieldValueBytes + 1,
        fileSize: options.fileMaxBytes + 1,
        parts: FORM_LIMITS.fields + FORM_LIMITS.files,
      },
      throwFileSizeLimit: false,
    } as Parameters<FastifyRequest['parts']>[0]);
    for await (const part of parts) {
      if (part.type === 'field') {
        const value = typeof part.value === 'string' ? part.value : String(part.value ?? '');
        if (part.fieldnameTruncated) throw fieldNameTooLong();
        if (part.valueTruncated) throw fieldTooLarge(part.fieldname);
        checkField(part.fieldname, value);
        fieldBytes += Buffer.byteLength(part.fieldname) + Buffer.byteLength(value);
        if (fieldBytes > options.fieldBytes) {
          throw new AppError('PAYLOAD_TOO_LARGE', `The form's fields (its files aside) come to more than ${options.fieldBytes} bytes.`, { limitBytes: options.fieldBytes });
        }
        fields.push([part.fieldname, value]);
        continue;
      }
      // busboy reports a form cut short on the file stream; destroyed, it keeps the error for the reader.
      part.file.once('error', (error) => part.file.destroy(error));
      if (part.filename === '') {
        // An empty file input: browsers send a part with no file name and no bytes. Read and dropped.
        part.file.resume();
        await finished(part.file);
        continue;
      }
      files += 1;
      if (files > FORM_LIMITS.files) throw tooManyFiles();
      checkField(part.fieldname, '');
      const id = await options.storeFile({ field: part.fieldname, name: part.filename, contentType: part.mimetype, body: part.file });
      options.stored.push(id);
      fields.push([part.fieldname, id]);
    }
  } catch (error) {
    throw formError(error);
  }
  return fields;
}

/** A form busboy cannot read is the client's mistake, whatever it raised: 413 for a limit, else 400. */
function formError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  const code = (error as { code?: string }).code;
  if (code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') return tooManyFields();
  if (code === 'FST_FILES_LIMIT') return tooManyFiles();
  if (code === 'FST_PROTO_VIOLATION') return invalidRequest('A form field cannot be named after a property every object has (__proto__, constructor, toString, …).', { field: 'body' });
  return invalidRequest(`The multipart form cannot be read: ${(error as Error).message}.`, { field: 'body' });
}

/** An urlencoded body as its parser leaves it, for readFormFields. */
export class UrlencodedText {
  constructor(readonly text: string) {}
}

/**
 * The parsers of the create route's own scope: urlencoded bodies as text (within `bodyLimit`),
 * multipart forms left to @fastify/multipart (read part by part by readMultipart). Every other
 * route keeps JSON alone: no other route can be reached by a plain form.
 */
export async function addFormParsers(scope: FastifyInstance, bodyLimit: number): Promise<void> {
  await scope.register(multipart);
  scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit }, (_request, body, done) => done(null, new UrlencodedText(body as string)));
  // An answer that goes out before a form is all in (a refusal, 413, a form cut short): the
  // rest is read and dropped while the answer goes out, then the connection closes, as uploads do.
  scope.addHook('onSend', async (request, reply) => {
    const raw = request.raw;
    if (raw.readableEnded || raw.destroyed || isFormBody(request) !== 'multipart') return;
    reply.header('connection', 'close');
    raw.unpipe();
    raw.resume();
  });
}

/** What a form says, its data still as text (formFieldsToData converts it). */
export interface ReadForm extends FormParts {
  /** The redirect checked against the collection's origins. */
  redirectUrl: URL | null;
}

/**
 * Reads a form body: its fields (files stored through `storeFile` as they come), the reserved
 * fields taken out, and the redirect (the form's field, else `?redirect=`) checked.
 */
export async function readFormFields(
  request: FastifyRequest,
  kind: 'urlencoded' | 'multipart',
  options: Parameters<typeof readMultipart>[1] & { origins: readonly string[]; honeypot: string | null },
): Promise<ReadForm> {
  const sent = kind === 'urlencoded' ? readUrlencoded(request.body instanceof UrlencodedText ? request.body.text : '') : await readMultipart(request, options);
  const parts = splitReservedFields(sent, options.honeypot);
  const raw = parts.redirect ?? queryRedirect(request);
  return { ...parts, redirect: raw, redirectUrl: raw === null ? null : checkRedirect(raw, options.origins) };
}

/** `?redirect=` of the request, if given once. */
export function queryRedirect(request: Pick<FastifyRequest, 'query'>): string | null {
  const query = request.query as Record<string, unknown> | undefined;
  const value = query && Object.hasOwn(query, REDIRECT_FIELD) ? query[REDIRECT_FIELD] : undefined;
  if (value === undefined) return null;
  if (typeof value !== 'string') throw invalidRequest('Give ?redirect= once.', { field: `querystring.${REDIRECT_FIELD}` });
  return value;
}
