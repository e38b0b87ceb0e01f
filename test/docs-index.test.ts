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
