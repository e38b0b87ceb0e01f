/** The filter that matches these records and no other: `id in ["rec_…", …]`. */
export function idFilter(ids: readonly string[]): string {
  return `id in [${ids.map((id) => JSON.stringify(id)).join(', ')}]`;
}
