import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The folder of Plainbase's package.json, found by walking up from this module. Files that ship
 * beside the code (package.json, the dashboard's build in web/dist) are found from here: a module
 * runs from src/ in development and from a bundle in dist/ or dist/chunks/ once built
 * (scripts/build-server.mjs), so a path relative to the module itself would hold for only one.
 */
export const PACKAGE_ROOT = findPackageRoot(path.dirname(fileURLToPath(import.meta.url)));

function findPackageRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json in ${start} or above it`);
  }
}
