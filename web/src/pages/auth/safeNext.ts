/** Where to go after signing in: only a path on this site, never another origin (`//evil`, `https:`). */
export function safeNext(next: string | null): string {
  if (!next || !next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\')) return '/';
  return next;
}
