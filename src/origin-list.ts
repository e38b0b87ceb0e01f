/**
 * Lists of the web origins that may call (PLAINBASE_CORS_ORIGINS for the data API, a collection's
 * `settings.submissions.origins` for its public submissions): how an entry is written and how a
 * request's Origin header is looked up in a list, said once for both.
 */

/**
 * `text` as an origin browsers send in the Origin header (scheme, host and port only, lower case,
 * no default port, no path, no trailing slash), or null when it is not written as one. `*` is
 * not an origin: a list takes it beside them.
 */
export function browserOrigin(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === text.toLowerCase() ? url.origin : null;
}

/** Whether a list of origins admits a request's `origin`: listed (in any case), or the list holds `*`. */
export const originListed = (origins: readonly string[], origin: string): boolean => origins.includes('*') || origins.includes(origin.toLowerCase());
