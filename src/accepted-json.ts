import { unstorableTextReason } from './storable-text.js';

/**
 * What any JSON the API accepts must be, whatever route it arrives by (request bodies, import
 * rows, CSV cells typed as JSON; docs/security.md):
 *
 * - nested at most MAX_JSON_DEPTH levels, so nothing recursive (schema validation, serialising,
 *   SQLite's JSON functions, which stop at 1,000) ever meets more;
 * - numbers within the double range: JSON.parse reads 1e400 as Infinity, which would be stored
 *   as null;
 * - no key named "__proto__" and no "constructor" holding "prototype", as Fastify's parser has
 *   always refused in bodies: an import stores nothing a create could not;
 * - text both engines can store (no NUL, no lone surrogate), keys included.
 *
 * The walk is iterative, so the depth of what it checks costs it nothing but the check.
 */
export const MAX_JSON_DEPTH = 100;

export interface JsonRefusal {
  /** Where, like `body.data.tags[2]`; cut short for very deep places. */
  field: string;
  /** A sentence for the caller, naming the field where that helps. */
  message: string;
  /** Set when a limit was passed. */
  limit?: number;
}

export interface JsonCheckOptions {
  /** The name of the checked value in messages: `body`, `data`. */
  name: string;
  /**
   * Levels of the value that are an envelope, not counted: 1 for a request body, whose own
   * braces wrap what the route takes (`{"data": …}`, `{"schema": …}`), so record data nests the
   * same 100 levels whether it is created, replaced or imported.
   */
  envelope: 0 | 1;
  /**
   * Whether strings and keys can hold NUL or lone surrogates. In JSON text those arrive only as
   * \u escapes, so a caller holding the text passes `text.includes('\\u')` and skips the work.
   */
  checkText: boolean;
}

interface Frame {
  value: object;
  depth: number;
  parent: Frame | null;
  key: string | number | null;
}

const MAX_FIELD_LENGTH = 200;

/** Why the value is not JSON the API accepts, or null when it is. */
export function jsonRefusal(value: unknown, options: JsonCheckOptions): JsonRefusal | null {
  // Every request body and import row passes here: the common answer (accepted) is found by a
  // lean walk, about a quarter of JSON.parse's time; only a refusal pays for naming its field.
  if (isAccepted(value, MAX_JSON_DEPTH + options.envelope, options.checkText)) return null;
  return describeRefusal(value, options);
}

function isAccepted(root: unknown, maxDepth: number, checkText: boolean): boolean {
  if (typeof root !== 'object' || root === null) return scalarReason(root, checkText) === undefined;
  const values: object[] = [root];
  const depths: number[] = [1];
  while (values.length > 0) {
    const value = values.pop()!;
    const depth = depths.pop()!;
    if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index += 1) {
        const child: unknown = value[index];
        if (typeof child === 'object' && child !== null) {
          if (depth >= maxDepth) return false;
          values.push(child);
          depths.push(depth + 1);
        } else if (scalarReason(child, checkText) !== undefined) return false;
      }
      continue;
    }
    const prototype: unknown = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) return false;
    // for…in with hasOwn: measurably cheaper than Object.keys, which allocates an array per object.
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      if (key === '__proto__' || (checkText && unstorableTextReason(key) !== undefined)) return false;
      const child: unknown = (value as Record<string, unknown>)[key];
      if (typeof child === 'object' && child !== null) {
        if (depth >= maxDepth || (key === 'constructor' && Object.hasOwn(child, 'prototype'))) return false;
        values.push(child);
        depths.push(depth + 1);
      } else if (scalarReason(child, checkText) !== undefined) return false;
    }
  }
  return true;
}

/** The first refusal found, with its field; null when there is none. */
function describeRefusal(value: unknown, options: JsonCheckOptions): JsonRefusal | null {
  const rootScalar = scalarReason(value, options.checkText);
  if (rootScalar) return { field: options.name, message: `${options.name} ${rootScalar}.` };
  if (typeof value !== 'object' || value === null) return null;
  const maxDepth = MAX_JSON_DEPTH + options.envelope;
  const stack: Frame[] = [{ value, depth: 1, parent: null, key: null }];
  const refuse = (frame: Frame, key: string | number | null, reason: string, limit?: number): JsonRefusal => {
    const field = fieldOf(options.name, frame, key, limit !== undefined);
    return { field, message: `${field} ${reason}.`, ...(limit === undefined ? {} : { limit }) };
  };
  const prototypeKey = (frame: Frame, message: string): JsonRefusal => ({ field: fieldOf(options.name, frame, null, false), message });

  while (stack.length > 0) {
    const frame = stack.pop()!;
    const container = frame.value;
    if (Array.isArray(container)) {
      for (let index = 0; index < container.length; index += 1) {
        const child: unknown = container[index];
        if (typeof child === 'object' && child !== null) {
          if (frame.depth >= maxDepth) return refuse(frame, index, `nests deeper than ${MAX_JSON_DEPTH} levels`, MAX_JSON_DEPTH);
          stack.push({ value: child, depth: frame.depth + 1, parent: frame, key: index });
        } else {
          const reason = scalarReason(child, options.checkText);
          if (reason) return refuse(frame, index, reason);
        }
      }
      continue;
    }
    // A parser that builds objects by assignment (stream-json) turns a "__proto__" key into the
    // object's prototype: the key is then gone, and only this shows it.
    const prototype: unknown = Object.getPrototypeOf(container);
    if (prototype !== Object.prototype && prototype !== null) return prototypeKey(frame, PROTO_KEY);
    for (const key of Object.keys(container)) {
      if (key === '__proto__') return prototypeKey(frame, PROTO_KEY);
      if (options.checkText) {
        const keyReason = unstorableTextReason(key);
        if (keyReason) return refuse(frame, null, `has a key that ${keyReason}`);
      }
      const child: unknown = (container as Record<string, unknown>)[key];
      if (typeof child === 'object' && child !== null) {
        if (key === 'constructor' && !Array.isArray(child) && Object.hasOwn(child, 'prototype')) return prototypeKey(frame, CONSTRUCTOR_PROTOTYPE);
        if (frame.depth >= maxDepth) return refuse(frame, key, `nests deeper than ${MAX_JSON_DEPTH} levels`, MAX_JSON_DEPTH);
        stack.push({ value: child, depth: frame.depth + 1, parent: frame, key });
      } else {
        const reason = scalarReason(child, options.checkText);
        if (reason) return refuse(frame, key, reason);
      }
    }
  }
  return null;
}

const PROTO_KEY = 'A field cannot be named "__proto__".';
const CONSTRUCTOR_PROTOTYPE = 'A field named "constructor" cannot hold a field named "prototype".';

function scalarReason(value: unknown, checkText: boolean): string | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : 'is a number outside the range of a double (such as 1e400)';
  if (checkText && typeof value === 'string') return unstorableTextReason(value);
  return undefined;
}

/**
 * `name.a.b[3]` for a refusal at `key` of `frame`. A depth refusal names the top-level field
 * that nests too deep (its full path would be a hundred segments long).
 */
function fieldOf(name: string, frame: Frame, key: string | number | null, topLevelOnly: boolean): string {
  const keys: (string | number)[] = [];
  if (key !== null) keys.push(key);
  for (let at: Frame | null = frame; at && at.key !== null; at = at.parent) keys.push(at.key);
  keys.reverse();
  const shown = topLevelOnly ? keys.slice(0, 1) : keys;
  let field = name;
  for (const segment of shown) {
    field += typeof segment === 'number' ? `[${segment}]` : `.${segment}`;
    if (field.length > MAX_FIELD_LENGTH) return `${field.slice(0, MAX_FIELD_LENGTH)}…`;
  }
  return field;
}
