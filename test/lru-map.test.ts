import { describe, expect, it } from 'vitest';
import { LruMap } from '../src/lru-map.js';

describe('LruMap', () => {
  it('keeps at most its capacity, dropping the least recently used entry first', () => {
    const map = new LruMap<string, number>(2);
    map.set('a', 1);
    map.set('b', 2);
    expect(map.get('a')).toBe(1); // a is now the most recently used
    map.set('c', 3);
    expect(map.get('b')).toBeUndefined();
    expect(map.get('a')).toBe(1);
    expect(map.get('c')).toBe(3);
    map.set('a', 10); // replacing counts as a use
    map.set('d', 4);
    expect(map.get('c')).toBeUndefined();
    expect(map.get('a')).toBe(10);
    expect(map.get('d')).toBe(4);
  });
});
