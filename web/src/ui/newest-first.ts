/**
 * A list in the dashboard's one order: newest first, by the time given (createdAt, joinedAt). For
 * lists the API answers oldest first and that the dashboard loads whole.
 */
export function newestFirst<T>(items: T[], time: (item: T) => string): T[] {
  // The API's times are ISO 8601 in UTC with milliseconds: their text sorts as the times do.
  return [...items].sort((a, b) => (time(a) < time(b) ? 1 : time(a) > time(b) ? -1 : 0));
}
