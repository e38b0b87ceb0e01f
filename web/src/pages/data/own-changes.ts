/**
 * Record changes this browser tab has just made itself. The page already says "Created record …"
 * when its own save returns; the live event stream then reports the same change a moment later,
 * which would be a second notice for one action. Each save notes the event it will cause, and the
 * stream's handler takes that note back once instead of announcing it. Notes not taken (the stream
 * paused, or filtered) go stale after a minute so the map stays small.
 */
const notes = new Map<string, number>();
const STALE_MS = 60_000;

export function noteOwnChange(eventType: 'record.created' | 'record.updated', recordId: string): void {
  const now = Date.now();
  for (const [key, at] of notes) if (now - at > STALE_MS) notes.delete(key);
  notes.set(`${eventType} ${recordId}`, now);
}

/** True once for an event this tab caused itself (the note is used up), false otherwise. */
export function takeOwnChange(eventType: string, recordId: string): boolean {
  const key = `${eventType} ${recordId}`;
  const at = notes.get(key);
  notes.delete(key);
  return at !== undefined && Date.now() - at <= STALE_MS;
}
