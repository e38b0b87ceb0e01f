import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The suite must leave the developer's ./data (the service's default data folder, with their own
 * database and files) as it found it: every test writes under the temp folder (harness.ts
 * testDataDir, server-process.ts). This notes what ./data holds before the run and fails the run
 * when anything in it was added, changed or removed.
 */
const DATA = fileURLToPath(new URL('../../data', import.meta.url));

function listing(folder: string): Map<string, string> {
  const entries = new Map<string, string>();
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      const stat = fs.statSync(full);
      entries.set(path.relative(folder, full), entry.isDirectory() ? 'folder' : `${stat.size} ${stat.mtimeMs}`);
      if (entry.isDirectory()) walk(full);
    }
  };
  if (fs.existsSync(folder)) walk(folder);
  return entries;
}

export default function setup(): () => void {
  const before = listing(DATA);
  return () => {
    const after = listing(DATA);
    const changed = [...new Set([...before.keys(), ...after.keys()])].filter((name) => before.get(name) !== after.get(name));
    if (changed.length === 0) return;
    const shown = changed.slice(0, 10).map((name) => `  data/${name}`).join('\n');
    throw new Error(`The run wrote into ./data, the developer's data folder (${changed.length} entries), e.g.:\n${shown}\nTests must write under os.tmpdir().`);
  };
}
