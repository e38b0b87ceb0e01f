import { expect } from 'vitest';

/**
 * Prototype pollution shows as new properties on the built-in prototypes of this process (the
 * app under test runs in it). Their own property names are taken when this module loads, before
 * any request, and compared after.
 */
const WATCHED = { Object: Object.prototype, Array: Array.prototype, Function: Function.prototype, String: String.prototype } as const;
const before = Object.fromEntries(Object.entries(WATCHED).map(([name, proto]) => [name, Reflect.ownKeys(proto).map(String).sort()]));

export function expectPrototypesUntouched(): void {
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(Object.keys(Object.prototype)).toEqual([]);
  for (const [name, proto] of Object.entries(WATCHED)) {
    expect(Reflect.ownKeys(proto).map(String).sort(), `${name}.prototype`).toEqual(before[name]);
  }
  expect(Object.getPrototypeOf(Object.prototype)).toBeNull();
}
