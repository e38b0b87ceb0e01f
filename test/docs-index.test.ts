import fs from 'node:fs';
import { expect, it } from 'vitest';

// docs/README.md is the index a reader starts from: every page of docs/ is on it, once, and every link on it leads to a page.
it('docs/README.md links every page of docs/ once', () => {
  const folder = new URL('../docs/', import.meta.url);
  const pages = fs.readdirSync(folder).filter((name) => name.endsWith('.md') && name !== 'README.md').sort();
  const index = fs.readFileSync(new URL('README.md', folder), 'utf8');
  const linked = [...index.matchAll(/^- \[([\w-]+\.md)\]\(([\w-]+\.md)\): \S/gm)].map((match) => {
    expect(match[1]).toBe(match[2]);
    return match[2]!;
  });
  expect([...linked].sort()).toEqual(pages);
});

// One page of current figures, each with its command; the history of runs is in git.
it('docs/performance.md stays one page under 250 lines, every bench it names a real npm script', () => {
  const page = fs.readFileSync(new URL('../docs/performance.md', import.meta.url), 'utf8');
  expect(page.trimEnd().split('\n').length).toBeLessThan(250);
  const scripts = Object.keys((JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> }).scripts);
  const named = [...page.matchAll(/npm run (bench:[\w-]+)/g)].map((match) => match[1]!);
  expect(named.length).toBeGreaterThan(5);
  for (const script of named) expect(scripts, script).toContain(script);
});
