import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Why the dashboard could not be built for this run; null when it was (or was fresh). */
    dashboardBuildError: string | null;
  }
}

/**
 * Vitest global setup: makes sure web/dist holds a build of the current dashboard sources before
 * any test runs, so the e2e tests never drive a stale dashboard. It builds only when a source is
 * newer than the build. The sources are web/ itself and every file outside it that the build read
 * (src/abilities.ts, src/modules/events/event-types.ts, ...): each build records them, from Vite's
 * own module graph, in web/dist/sources.json, so a new import from src/ is watched without anyone
 * having to list it. The new build goes to a temporary folder first, its assets are added beside
 * the old ones and index.html is swapped last, so a server started by another test run meanwhile
 * keeps working.
 */

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const WEB = path.join(ROOT, 'web');
const DIST = path.join(WEB, 'dist');
/** web/'s own sources, watched whole (a new file counts too). */
const WEB_SOURCES = ['src', 'public', 'index.html', 'vite.config.ts', 'tsconfig.json'].map((name) => path.join(WEB, name));
/** The files outside web/ that the last build read, relative to the repository root. */
const SOURCES_FILE = 'sources.json';

function newestChange(entry: string): number {
  const info = fs.statSync(entry, { throwIfNoEntry: false });
  if (!info) return 0;
  if (!info.isDirectory()) return info.mtimeMs;
  return Math.max(info.mtimeMs, ...fs.readdirSync(entry).map((name) => newestChange(path.join(entry, name))));
}

/** The files outside web/ that the build in `dist` read; null when it did not say (a build by `npm run build:dashboard`). */
export function recordedSources(dist = DIST): string[] | null {
  try {
    const listed: unknown = JSON.parse(fs.readFileSync(path.join(dist, SOURCES_FILE), 'utf8'));
    return Array.isArray(listed) && listed.every((entry) => typeof entry === 'string') ? listed : null;
  } catch {
    return null;
  }
}

/** Whether the build in `dist` is newer than web/ and than every file outside web/ it read. */
export function dashboardIsFresh(dist = DIST): boolean {
  const built = fs.statSync(path.join(dist, 'index.html'), { throwIfNoEntry: false });
  const outside = recordedSources(dist);
  if (!built || !outside) return false;
  return built.mtimeMs >= Math.max(...WEB_SOURCES.map(newestChange), ...outside.map((file) => newestChange(path.join(ROOT, file))));
}

/**
 * A build that fails (a syntax error in web/ mid-edit) must not stop the tests that have nothing
 * to do with the dashboard: the error is handed to the e2e tests, which fail with it.
 */
export default async function setup(project: TestProject): Promise<void> {
  try {
    await buildDashboard();
    project.provide('dashboardBuildError', null);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`\n*** The dashboard (web/) does not build; the e2e tests will fail: ${message.split('\n')[0]} ***\n\n`);
    project.provide('dashboardBuildError', message);
  }
}

export async function buildDashboard(): Promise<void> {
  if (dashboardIsFresh()) return;
  const { build } = await import('vite');
  const staging = path.join(WEB, `.dist-${process.pid}-${Date.now()}`);
  // Vitest sets NODE_ENV=test, which would make Vite bundle React's development build.
  const nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  try {
    const read = new Set<string>();
    await build({
      configFile: path.join(WEB, 'vite.config.ts'),
      logLevel: 'warn',
      build: { outDir: staging, emptyOutDir: true },
      plugins: [{ name: 'plainbase-record-sources', buildEnd() { for (const id of this.getModuleIds()) read.add(id); } }],
    });
    fs.mkdirSync(path.join(DIST, 'assets'), { recursive: true });
    for (const name of fs.readdirSync(path.join(staging, 'assets'))) {
      fs.copyFileSync(path.join(staging, 'assets', name), path.join(DIST, 'assets', name));
    }
    // web/public's files (the favicon) keep their names at the top of the build.
    for (const entry of fs.readdirSync(staging, { withFileTypes: true })) {
      if (entry.isFile() && entry.name !== 'index.html') fs.copyFileSync(path.join(staging, entry.name), path.join(DIST, entry.name));
    }
    // Written before index.html: a build is never taken for fresh without the list of what it read.
    fs.writeFileSync(path.join(DIST, SOURCES_FILE), `${JSON.stringify(sourcesOutsideWeb(read), null, 2)}\n`);
    // rename is atomic: a reader sees the old index.html or the new one, never half of either.
    fs.renameSync(path.join(staging, 'index.html'), path.join(DIST, 'index.html'));
  } finally {
    process.env.NODE_ENV = nodeEnv;
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

/** The module ids of a build that are files of this repository outside web/ (not packages, not Vite's own). */
function sourcesOutsideWeb(moduleIds: Iterable<string>): string[] {
  const files = new Set<string>();
  for (const id of moduleIds) {
    const file = id.split('?')[0]!;
    if (!path.isAbsolute(file) || !file.startsWith(ROOT) || file.startsWith(WEB + path.sep) || file.includes(`${path.sep}node_modules${path.sep}`)) continue;
    if (fs.existsSync(file)) files.add(path.relative(ROOT, file).split(path.sep).join('/'));
  }
  return [...files].sort();
}
