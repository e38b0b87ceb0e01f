/**
 * The sites allowed to post to a collection's public submissions, as the settings form reads
 * them: one origin a line, each `scheme://host[:port]` exactly as a browser sends it in its
 * Origin header, or `*` for any site. The API checks them too; this only helps while typing.
 */

export const ANY_ORIGIN = '*';

/** The origins written in the form's text: one a line, blank lines and surrounding spaces left out. */
export function originsOfText(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

/** What is wrong with one origin, in words for the person typing it, or null when it is one. */
export function originProblem(origin: string): string | null {
  if (origin === ANY_ORIGIN) return null;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return `${origin} is not an origin: write it as scheme://host or scheme://host:port, like https://example.com.`;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `${origin} is not an origin: it must start with https:// (or http://).`;
  // A browser's Origin header is exactly url.origin: no default port, no path. Upper-case letters
  // are let through: the service stores the origin in lower case.
  if (url.origin !== origin.toLowerCase()) {
    const hasMore = url.username !== '' || url.password !== '' || url.pathname !== '/' || url.search !== '' || url.hash !== '';
    return hasMore
      ? `${origin} is not an origin: leave out the path and anything after the host and port (${url.origin}).`
      : `${origin} is not written as browsers send it: use ${url.origin}.`;
  }
  return null;
}

/** Every problem of a list of origins, one line each: the bad ones, then any written twice. */
export function originsProblems(origins: string[]): string[] {
  const problems = origins.map(originProblem).filter((problem): problem is string => problem !== null);
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const origin of origins) {
    if (seen.has(origin)) repeated.add(origin);
    seen.add(origin);
  }
  for (const origin of repeated) problems.push(`${origin} is listed more than once.`);
  return problems;
}
