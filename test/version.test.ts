import fs from 'node:fs';
import { expect, it } from 'vitest';

/**
 * A version's minor number is its newest migration (0.15.0 brings migration 0015), so a version
 * that adds a migration must move it; the changelog's newest entry is that version.
 */
const read = (file: string) => fs.readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');

it('package.json\'s version, the changelog\'s newest entry and the newest migration agree', () => {
  const version = (JSON.parse(read('package.json')) as { version: string }).version;
  const numbers = fs
    .readdirSync(new URL('../src/db/migrations/', import.meta.url))
    .map((name) => /^(\d{4})-.+\.ts$/.exec(name)?.[1])
    .filter((number): number is string => number !== undefined)
    .map(Number);
  expect(numbers.length).toBeGreaterThan(0);
  const newest = Math.max(...numbers);
  expect(version).toMatch(/^0\.\d+\.\d+$/);
  expect(Number(version.split('.')[1]), `package.json ${version} vs migration ${newest}`).toBe(newest);

  const entries = [...read('CHANGELOG.md').matchAll(/^## (\d+\.\d+\.\d+) \(\d{4}-\d{2}-\d{2}\)$/gm)].map((match) => match[1]);
  expect(entries[0], 'the changelog\'s newest entry').toBe(version);
  // Newest first, each version once.
  const sorted = [...entries].sort((a, b) => b!.localeCompare(a!, 'en', { numeric: true }));
  expect(entries).toEqual([...new Set(sorted)]);
});
