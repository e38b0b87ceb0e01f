import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The repository is whole on its own: a clone with nothing beside it installs, tests and reads
 * true. So no tracked file may read a sibling folder of the repository or cite a document that
 * lives outside it; decisions are written in docs/ (docs/design.md) instead.
 */
const root = path.resolve(import.meta.dirname, '..');
// Spelled in pieces so that this file does not find itself.
const FORBIDDEN = [['..', '/shared'], ['SPEC', '.md'], ['DESIGN', '.md']].map((parts) => parts.join(''));

describe('the repository stands alone', () => {
  it('no tracked file reads a folder beside the repository or cites a document outside it', () => {
    const files = execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' })
      .split('\n')
      .filter((file) => file && file !== 'package-lock.json' && !/\.(png|jpe?g|ico|woff2?)$/.test(file));
    expect(files.length).toBeGreaterThan(100);
    const offenders: string[] = [];
    for (const file of files) {
      let text: string;
      try {
        text = readFileSync(path.join(root, file), 'utf8');
      } catch {
        continue; // listed but deleted in the work tree
      }
      for (const needle of FORBIDDEN) {
        const at = text.indexOf(needle);
        if (at >= 0) offenders.push(`${file}:${text.slice(0, at).split('\n').length}: ${needle}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
