import type { SearchTerm } from '../../db/dialect.js';
import { invalidRequest } from '../../errors.js';

/**
 * The text of `?search=` as terms (docs/queries.md, Search): words, "quoted phrases", and a `*`
 * right after a word or a closing quote for a prefix. Every term must match. The engines' own
 * query languages are never handed the caller's text: only the words found here, letters,
 * digits and marks, go into the query the dialect writes (Dialect.search), so quotes, NEAR,
 * column filters, AND/OR/NOT and lone `*` are just text. Punctuation inside a word splits it as
 * the index's tokenizer does: `foo-bar` is the phrase "foo bar".
 */

export const MAX_SEARCH_WORDS = 32;
const WORD = /[\p{L}\p{N}\p{M}]+/gu;
const PART = /"([^"]*)("?)(\*?)|([^\s"]+)/g;

export function parseSearch(text: string): SearchTerm[] {
  const field = 'querystring.search';
  const terms: SearchTerm[] = [];
  let count = 0;
  for (const match of text.matchAll(PART)) {
    const quoted = match[1];
    const raw = quoted ?? match[4]!;
    const words = raw.match(WORD)?.map((word) => word.toLowerCase()) ?? [];
    if (words.length === 0) continue;
    // A prefix: a star after the closing quote, or a word that ends with its star.
    const prefix = quoted !== undefined ? match[3] === '*' : /[\p{L}\p{N}\p{M}]\*+$/u.test(raw);
    count += words.length;
    if (count > MAX_SEARCH_WORDS) throw invalidRequest(`search takes at most ${MAX_SEARCH_WORDS} words.`, { field });
    terms.push({ words, prefix });
  }
  if (terms.length === 0) throw invalidRequest('search has no word to look for: give words, "a phrase" or a prefix like gard*.', { field });
  return terms;
}
