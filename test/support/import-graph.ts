import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * The dependency rule of src/ (docs/architecture.md), as data and a checker. Each file of src/
 * belongs to a unit (a folder, a module folder, or a top-level file) and each unit to a layer; a
 * file may import its own unit, and units of its own layer or of lower ones, never of a higher
 * layer; the units of one layer never import each other in a circle, and callers (http, worker)
 * never import each other at all.
 */

/** Lowest first: a layer may import itself and the layers before it. */
export const LAYERS = ['foundation', 'infrastructure', 'modules', 'callers', 'entry'] as const;
export type Layer = (typeof LAYERS)[number];

/** Layers whose units must not import each other at all (not merely not in a circle). */
const UNITS_APART: ReadonlySet<Layer> = new Set(['callers']);

/** Folders of src/ and their layers; every folder under modules/ is a unit of its own. */
const FOLDERS: Record<string, Layer> = {
  db: 'infrastructure',
  storage: 'infrastructure',
  delivery: 'infrastructure',
  modules: 'modules',
  http: 'callers',
  worker: 'callers',
};

/**
 * Files directly in src/. A new one must be placed here, on purpose: the test fails until it is.
 * Foundation: rules and helpers that need nothing of the application. Infrastructure: deps.ts,
 * the handles (database, dialect, clock) every service is given. Entry: what starts and wires
 * the process.
 */
const TOP_LEVEL_FILES: Record<string, Layer> = {
  'abilities.ts': 'foundation',
  'accepted-json.ts': 'foundation',
  'client-address.ts': 'foundation',
  'clock.ts': 'foundation',
  'config.ts': 'foundation',
  'errors.ts': 'foundation',
  'ids.ts': 'foundation',
  'lru-map.ts': 'foundation',
  'origin-list.ts': 'foundation',
  'package-root.ts': 'foundation',
  'page-budget.ts': 'foundation',
  'password-rules.ts': 'foundation',
  'secrets.ts': 'foundation',
  'spool-quota.ts': 'foundation',
  'storable-text.ts': 'foundation',
  'deps.ts': 'infrastructure',
  'services.ts': 'infrastructure',
  'app.ts': 'entry',
  'build-services.ts': 'entry',
  'cli.ts': 'entry',
  'idle-memory.ts': 'entry',
  'listen.ts': 'entry',
  'log-destination.ts': 'entry',
  'main.ts': 'entry',
};

export interface Place {
  /** `db`, `modules/records`, `app.ts`, ... */
  unit: string;
  layer: Layer;
}

/** Where a file of src/ (a path relative to src/, with /) sits; null when nothing places it. */
export function placeOf(file: string): Place | null {
  const parts = file.split('/');
  if (parts.length === 1) {
    const layer = TOP_LEVEL_FILES[file];
    return layer ? { unit: file, layer } : null;
  }
  const layer = FOLDERS[parts[0]!];
  if (!layer) return null;
  if (parts[0] === 'modules') return parts.length > 2 ? { unit: `modules/${parts[1]}`, layer } : null;
  return { unit: parts[0]!, layer };
}

/** One import: `from` and `to` relative to src/ (`to` null when it leaves src/). */
export interface ImportEdge {
  from: string;
  line: number;
  specifier: string;
  to: string | null;
}

/**
 * The module specifiers a file names, with their lines: static imports and re-exports (type-only
 * ones too: a type couples as much as a value), `import()` calls and `import('…').T` types.
 */
export function specifiersOf(fileName: string, text: string): { specifier: string; line: number }[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const found: { specifier: string; line: number }[] = [];
  const add = (node: ts.Node | undefined) => {
    if (node && ts.isStringLiteralLike(node)) {
      found.push({ specifier: node.text, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1 });
    }
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) add(node.moduleReference.expression);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) add(node.arguments[0]);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every .ts file under a folder, relative to it, with /. */
function filesUnder(folder: string, prefix = ''): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) return filesUnder(path.join(folder, entry.name), relative);
    return entry.name.endsWith('.ts') ? [relative] : [];
  });
}

/** The relative imports of every file of src/; packages (`kysely`, `node:fs`) are left out. */
export function importGraph(srcRoot: string): { files: string[]; edges: ImportEdge[] } {
  const files = filesUnder(srcRoot).sort();
  const edges: ImportEdge[] = [];
  for (const from of files) {
    for (const { specifier, line } of specifiersOf(from, readFileSync(path.join(srcRoot, from), 'utf8'))) {
      if (!specifier.startsWith('.')) continue;
      const absolute = path.resolve(path.dirname(path.join(srcRoot, from)), specifier);
      // Sources import their siblings by the name they are compiled to (x.js for x.ts).
      const typescript = absolute.replace(/\.js$/, '.ts');
      const target = existsSync(typescript) ? typescript : absolute;
      const relative = path.relative(srcRoot, target).split(path.sep).join('/');
      edges.push({ from, line, specifier, to: relative.startsWith('..') ? null : relative });
    }
  }
  return { files, edges };
}

const where = (edge: ImportEdge) => `src/${edge.from}:${edge.line} imports '${edge.specifier}'${edge.to ? ` (src/${edge.to})` : ''}`;

/**
 * What breaks the rule, one clear sentence each, naming the file, the line and the import.
 * `files` are checked for having a place even when they import nothing.
 */
export function checkDependencyRule(files: readonly string[], edges: readonly ImportEdge[], place: (file: string) => Place | null = placeOf): string[] {
  const problems: string[] = [];
  for (const file of files) {
    if (!place(file)) {
      problems.push(`src/${file} has no place in the layers: add its folder or file to test/support/import-graph.ts, and say why in docs/architecture.md`);
    }
  }
  /** unit → unit → the first import that makes the link. */
  const links = new Map<string, Map<string, ImportEdge>>();
  for (const edge of edges) {
    if (edge.to === null) {
      problems.push(`${where(edge)}: src/ imports only src/ and packages`);
      continue;
    }
    const from = place(edge.from);
    const to = place(edge.to);
    if (!from || !to || from.unit === to.unit) continue;
    const rankFrom = LAYERS.indexOf(from.layer);
    const rankTo = LAYERS.indexOf(to.layer);
    if (rankTo > rankFrom) {
      problems.push(`${where(edge)}: ${from.unit} is in the ${from.layer} layer, which may not import the ${to.layer} layer (${to.unit}); imports point down: ${LAYERS.slice().reverse().join(' → ')}`);
    } else if (rankTo === rankFrom && UNITS_APART.has(from.layer)) {
      problems.push(`${where(edge)}: ${from.unit} and ${to.unit} are both ${from.layer} and never import each other; move what they share down a layer`);
    }
    const targets = links.get(from.unit) ?? new Map<string, ImportEdge>();
    if (!targets.has(to.unit)) targets.set(to.unit, edge);
    links.set(from.unit, targets);
  }
  for (const cycle of unitCycles(links)) {
    const steps = cycle.map((edge) => `→ ${place(edge.to!)!.unit} (${where(edge)})`);
    problems.push(`a cycle between ${[...new Set(cycle.map((edge) => place(edge.from)!.unit))].join(', ')}: ${place(cycle[0]!.from)!.unit} ${steps.join(' ')}`);
  }
  return problems;
}

/**
 * Cycles, each as the imports that make it: the groups of units that reach each other are found
 * by Tarjan's strongly connected components; then, for each unit of a group, a shortest way
 * around through it (breadth first), each distinct way told once. That names every pair of
 * folders that import each other without listing every longer way round.
 */
function unitCycles(links: ReadonlyMap<string, ReadonlyMap<string, ImportEdge>>): ImportEdge[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const connect = (unit: string): void => {
    index.set(unit, index.size);
    low.set(unit, index.get(unit)!);
    stack.push(unit);
    onStack.add(unit);
    for (const next of links.get(unit)?.keys() ?? []) {
      if (!index.has(next)) {
        connect(next);
        low.set(unit, Math.min(low.get(unit)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(unit, Math.min(low.get(unit)!, index.get(next)!));
      }
    }
    if (low.get(unit) !== index.get(unit)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== unit);
    if (group.length > 1) groups.push(group.sort());
  };
  for (const unit of [...links.keys()].sort()) if (!index.has(unit)) connect(unit);

  const cycles: ImportEdge[][] = [];
  const told = new Set<string>();
  for (const group of groups) {
    const members = new Set(group);
    for (const start of group) {
      const way = shortestWayAround(links, members, start);
      const key = way.map((edge) => `${edge.from}:${edge.line}:${edge.specifier}`).sort().join(' ');
      if (told.has(key)) continue;
      told.add(key);
      cycles.push(way);
    }
  }
  return cycles;
}

/** The fewest imports that lead from `start` back to it, staying within `members`. */
function shortestWayAround(links: ReadonlyMap<string, ReadonlyMap<string, ImportEdge>>, members: ReadonlySet<string>, start: string): ImportEdge[] {
  const cameFrom = new Map<string, { unit: string; edge: ImportEdge }>();
  const queue = [start];
  for (const unit of queue) {
    for (const [next, edge] of links.get(unit) ?? []) {
      if (!members.has(next)) continue;
      if (next === start) {
        const way = [edge];
        for (let at = unit; at !== start; at = cameFrom.get(at)!.unit) way.unshift(cameFrom.get(at)!.edge);
        return way;
      }
      if (!cameFrom.has(next)) {
        cameFrom.set(next, { unit, edge });
        queue.push(next);
      }
    }
  }
  throw new Error(`no way around from ${start}`);
}
