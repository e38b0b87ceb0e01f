import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { dashboardIsFresh, recordedSources } from './support/build-dashboard.js';

/**
 * The e2e tests must never drive a stale dashboard: the build is redone when web/ or any file
 * outside it that the web code imports (the server's role table, its event types...) is newer.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const WEB = path.join(ROOT, 'web');

function* sourceFiles(folder: string): Generator<string> {
  for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(full);
    else if (/\.tsx?$/.test(entry.name)) yield full;
  }
}

/** Every file outside web/ that web/src imports, found from the import lines themselves. */
function importedFromOutsideWeb(): string[] {
  const files = new Set<string>();
  for (const file of sourceFiles(path.join(WEB, 'src'))) {
    for (const match of fs.readFileSync(file, 'utf8').matchAll(/from '(\.\.\/[^']+)'/g)) {
      const target = path.resolve(path.dirname(file), match[1]!).replace(/\.js$/, '.ts');
      if (!target.startsWith(WEB + path.sep)) files.add(path.relative(ROOT, target).split(path.sep).join('/'));
    }
  }
  return [...files].sort();
}

describe('the dashboard build the e2e tests drive', () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'plainbase-dist-'));
  afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

  it('lists every file outside web/ that the web code imports among what the build read', () => {
    const imported = importedFromOutsideWeb();
    expect(imported).toEqual(expect.arrayContaining(['src/abilities.ts', 'src/modules/events/event-types.ts']));
    // The global setup has just built (or found fresh) web/dist, with the list of what it read.
    expect(recordedSources()).toEqual(expect.arrayContaining(imported));
  });

  it('counts a build stale when a file it read outside web/ changed after it, or when it does not say what it read', () => {
    const dist = path.join(scratch, 'dist');
    fs.mkdirSync(dist);
    const outside = path.join(scratch, 'server-table.ts');
    fs.writeFileSync(outside, 'export const TABLE = [];\n');
    fs.writeFileSync(path.join(dist, 'index.html'), '<!doctype html>\n');
    fs.writeFileSync(path.join(dist, 'sources.json'), JSON.stringify([path.relative(ROOT, outside)]));
    // A build "made" an hour from now is newer than every source of web/ as it is.
    const inAnHour = Date.now() / 1000 + 3600;
    fs.utimesSync(path.join(dist, 'index.html'), inAnHour, inAnHour);
    fs.utimesSync(outside, inAnHour - 60, inAnHour - 60);
    expect(dashboardIsFresh(dist)).toBe(true);

    fs.utimesSync(outside, inAnHour + 60, inAnHour + 60);
    expect(dashboardIsFresh(dist)).toBe(false);

    fs.utimesSync(outside, inAnHour - 60, inAnHour - 60);
    fs.rmSync(path.join(dist, 'sources.json'));
    expect(dashboardIsFresh(dist)).toBe(false);
  });
});
