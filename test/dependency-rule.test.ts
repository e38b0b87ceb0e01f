import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkDependencyRule, importGraph, placeOf, specifiersOf, type ImportEdge } from './support/import-graph.js';
import { tableMentions } from './support/table-mentions.js';

/**
 * Imports in src/ point one way (docs/architecture.md): entry → callers (http, worker) → modules
 * → infrastructure (db, storage, delivery) → foundation, with no cycle between the folders of a
 * layer. The checker is tried on small made-up graphs first, so a pass on src/ means something.
 */
const src = path.resolve(import.meta.dirname, '../src');

const edge = (from: string, to: string, line = 1): ImportEdge => ({ from, to, line, specifier: `./${path.basename(to, '.ts')}.js` });

describe('the dependency checker', () => {
  it('passes a graph that points down', () => {
    const files = ['main.ts', 'http/routes.ts', 'modules/records/records.ts', 'modules/collections/collections.ts', 'db/schema.ts', 'errors.ts'];
    const edges = [
      edge('main.ts', 'http/routes.ts'),
      edge('http/routes.ts', 'modules/records/records.ts'),
      edge('modules/records/records.ts', 'modules/collections/collections.ts'),
      edge('modules/collections/collections.ts', 'db/schema.ts'),
      edge('db/schema.ts', 'errors.ts'),
      // Skipping a layer is allowed: a route may use an error of the foundation.
      edge('http/routes.ts', 'errors.ts'),
    ];
    expect(checkDependencyRule(files, edges)).toEqual([]);
  });

  it('names the file, line and import that point up', () => {
    const problems = checkDependencyRule(['modules/webhooks/webhooks.ts', 'worker/delivery-worker.ts'], [
      { from: 'modules/webhooks/webhooks.ts', line: 7, specifier: '../../worker/delivery-worker.js', to: 'worker/delivery-worker.ts' },
    ]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain("src/modules/webhooks/webhooks.ts:7 imports '../../worker/delivery-worker.js' (src/worker/delivery-worker.ts)");
    expect(problems[0]).toContain('modules layer, which may not import the callers layer');
  });

  it('finds infrastructure reaching into modules, and the foundation reaching into anything', () => {
    const problems = checkDependencyRule(['delivery/worker.ts', 'modules/events/outbox.ts', 'config.ts', 'modules/people/password-rules.ts'], [
      edge('delivery/worker.ts', 'modules/events/outbox.ts', 4),
      edge('config.ts', 'modules/people/password-rules.ts', 5),
    ]);
    expect(problems).toEqual([
      expect.stringMatching(/^src\/delivery\/worker\.ts:4 imports .*infrastructure layer, which may not import the modules layer \(modules\/events\)/),
      expect.stringMatching(/^src\/config\.ts:5 imports .*foundation layer, which may not import the modules layer \(modules\/people\)/),
    ]);
  });

  it('finds a cycle between module folders, with every import that makes it', () => {
    const files = ['modules/collections/collections.ts', 'modules/files/file-cleanup.ts', 'modules/records/records.ts'];
    const problems = checkDependencyRule(files, [
      edge('modules/collections/collections.ts', 'modules/files/file-cleanup.ts', 9),
      edge('modules/files/file-cleanup.ts', 'modules/records/records.ts', 3),
      edge('modules/records/records.ts', 'modules/collections/collections.ts', 11),
    ]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('a cycle between modules/collections, modules/files, modules/records');
    expect(problems[0]).toContain('src/modules/collections/collections.ts:9');
    expect(problems[0]).toContain('src/modules/files/file-cleanup.ts:3');
    expect(problems[0]).toContain('src/modules/records/records.ts:11');
  });

  it('keeps http and the worker apart', () => {
    const problems = checkDependencyRule(['worker/delivery-worker.ts', 'http/metrics.ts'], [edge('worker/delivery-worker.ts', 'http/metrics.ts')]);
    expect(problems).toEqual([expect.stringContaining('worker and http are both callers and never import each other')]);
  });

  it('asks for a place for a new top-level file or folder, and refuses imports that leave src/', () => {
    const problems = checkDependencyRule(['helpers.ts', 'jobs/nightly.ts', 'modules/loose.ts'], [
      { from: 'helpers.ts', line: 2, specifier: '../test/support/harness.js', to: null },
    ]);
    expect(problems).toEqual([
      expect.stringContaining('src/helpers.ts has no place in the layers'),
      expect.stringContaining('src/jobs/nightly.ts has no place in the layers'),
      expect.stringContaining('src/modules/loose.ts has no place in the layers'),
      expect.stringContaining("src/helpers.ts:2 imports '../test/support/harness.js': src/ imports only src/ and packages"),
    ]);
  });

  it('reads every kind of import: static, type-only, re-export, dynamic and import types', () => {
    const text = [
      "import { a } from './a.js';",
      "import type { B } from '../b.js';",
      "export { c } from './c.js';",
      "const d = await import('./d.js');",
      "type E = import('./e.js').E;",
      "import fs from 'node:fs';",
    ].join('\n');
    expect(specifiersOf('x.ts', text)).toEqual([
      { specifier: './a.js', line: 1 },
      { specifier: '../b.js', line: 2 },
      { specifier: './c.js', line: 3 },
      { specifier: './d.js', line: 4 },
      { specifier: './e.js', line: 5 },
      { specifier: 'node:fs', line: 6 },
    ]);
  });
});

describe('src/', () => {
  const { files, edges } = importGraph(src);

  it('follows the dependency rule: imports point down the layers, with no cycle between folders', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(edges.length).toBeGreaterThan(300);
    expect(checkDependencyRule(files, edges)).toEqual([]);
  });

  it('places the files the layers are about where docs/architecture.md says', () => {
    expect(placeOf('worker/delivery-worker.ts')).toEqual({ unit: 'worker', layer: 'callers' });
    expect(placeOf('modules/webhooks/delivery-queue.ts')).toEqual({ unit: 'modules/webhooks', layer: 'modules' });
    expect(placeOf('delivery/send.ts')).toEqual({ unit: 'delivery', layer: 'infrastructure' });
    expect(placeOf('config.ts')).toEqual({ unit: 'config.ts', layer: 'foundation' });
  });

  it('has one owner for the deliveries: only modules/webhooks/ (and the migrations) name their tables', () => {
    const tables = ['deliveries', 'delivery_attempts'];
    // The check itself, on a made-up file: a Kysely table name and raw SQL count, prose does not.
    const sample = "await db.selectFrom('deliveries.state');\nconst q = sql`delete from delivery_attempts`;\nthrow new Error('no deliveries');";
    expect(tableMentions('sample.ts', sample, tables)).toEqual([{ table: 'deliveries', line: 1 }, { table: 'delivery_attempts', line: 2 }]);

    const outside = files
      .filter((file) => !file.startsWith('modules/webhooks/') && !file.startsWith('db/migrations/'))
      .flatMap((file) => tableMentions(file, readFileSync(path.join(src, file), 'utf8'), tables).map(({ table, line }) => `src/${file}:${line} names ${table}`));
    expect(outside).toEqual([]);
  });
});
