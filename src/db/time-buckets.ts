import type SqliteDatabase from 'better-sqlite3';

/**
 * A timestamp's bucket in a time zone's local time, as a label (the aggregates' groupBy of
 * `createdAt:day` and the like). The labels, for a time that is local `2026-11-28 14:35` at
 * offset +01:00:
 *
 *   hour   2026-11-28T14:00+01:00   (the offset tells apart the two 02:00 hours of a night the
 *                                    clocks go back)
 *   day    2026-11-28
 *   week   2026-11-23               (the Monday the week starts on, ISO 8601)
 *   month  2026-11
 *
 * PostgreSQL computes them in SQL from its own time zone database (postgres-dialect.ts,
 * timeBucket). SQLite has no time zones: there the statement calls `plainbase_time_bucket`, this
 * file's function registered on the connection, which asks the JavaScript runtime's time zone
 * database (Intl) for the offset at the instant. So a day that starts at 23:00 UTC in winter and
 * at 22:00 UTC in summer is the same local day on both engines, and a day with a clock change
 * has 23 or 25 hours on both.
 */
export const TIME_BUCKET_UNITS = ['hour', 'day', 'week', 'month'] as const;
export type TimeBucketUnit = (typeof TIME_BUCKET_UNITS)[number];

export const SQLITE_TIME_BUCKET_FUNCTION = 'plainbase_time_bucket';

/**
 * The zone names a bucket takes: IANA names the runtime knows (Europe/Berlin, Asia/Kolkata, UTC,
 * Etc/GMT+5), never an offset like +01:00, which PostgreSQL reads with the opposite sign (POSIX).
 */
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+){0,2}$/;
const knownZones = new Map<string, boolean>();
export function isKnownTimeZone(name: string): boolean {
  if (name.length > 64 || !ZONE_NAME.test(name)) return false;
  let known = knownZones.get(name);
  if (known === undefined) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: name });
      known = true;
    } catch {
      known = false;
    }
    if (knownZones.size < 1000) knownZones.set(name, known);
  }
  return known;
}

const HOUR_MS = 3_600_000;
const SLOT_MS = 15 * 60_000;

interface Zone {
  format: Intl.DateTimeFormat;
  /** The offset through each hour of UTC (by its number since 1970), NaN where it changes within the hour. */
  offsets: Map<number, number>;
  /** Labels by unit and 15-minute slot of UTC, for slots at an offset that is a whole number of 15 minutes. */
  labels: Map<string, string>;
  /**
   * The last label made from a kept slot, with the unit and the minute of UTC it was for
   * (`2026-11-28T14:35`): a statement reads records mostly in the order they were created, so
   * the next time is most often in the same minute, and then costs a comparison of its text.
   */
  last: { unit: TimeBucketUnit; minute: string; label: string } | null;
}

const zoneCache = new Map<string, Zone>();
/** A bound on what is kept per zone: about three years of hours, a year of 15-minute slots for two units. */
const MAX_KEPT = 70_000;

function zoneOf(name: string): Zone {
  let zone = zoneCache.get(name);
  if (!zone) {
    const format = new Intl.DateTimeFormat('en-US', {
      timeZone: name, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
    });
    zone = { format, offsets: new Map(), labels: new Map(), last: null };
    zoneCache.set(name, zone);
  }
  return zone;
}

/**
 * The zone's offset from UTC at the instant, in milliseconds (whole seconds), from Intl. For
 * years 100 to 9999: record times come from the server's clock.
 */
function offsetFromIntl(zone: Zone, ms: number): number {
  const parts: Record<string, string> = {};
  for (const { type, value } of zone.format.formatToParts(ms)) parts[type] = value;
  const local = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second));
  return local - Math.floor(ms / 1000) * 1000;
}

/**
 * The offset at the instant. Asking Intl costs microseconds, so the offset is kept per hour of
 * UTC when it is the same at both ends of the hour (zones change offset at most once an hour),
 * and asked instant by instant within an hour when it changes.
 */
function offsetAt(zone: Zone, ms: number): number {
  const hour = Math.floor(ms / HOUR_MS);
  let offset = zone.offsets.get(hour);
  if (offset === undefined) {
    const first = offsetFromIntl(zone, hour * HOUR_MS);
    offset = offsetFromIntl(zone, hour * HOUR_MS + HOUR_MS - 1) === first ? first : Number.NaN;
    if (zone.offsets.size >= MAX_KEPT) zone.offsets.clear();
    zone.offsets.set(hour, offset);
  }
  return Number.isNaN(offset) ? offsetFromIntl(zone, ms) : offset;
}

const two = (n: number) => String(n).padStart(2, '0');
const four = (n: number) => (n < 0 ? `-${String(-n).padStart(4, '0')}` : String(n).padStart(4, '0'));

/** The label of the bucket of `unit` that holds `ms`, at the zone's offset `offset` then. */
function labelAt(ms: number, offset: number, unit: TimeBucketUnit): string {
  const local = new Date(ms + offset);
  const [y, m, d] = [local.getUTCFullYear(), local.getUTCMonth() + 1, local.getUTCDate()];
  switch (unit) {
    case 'month':
      return `${four(y)}-${two(m)}`;
    case 'day':
      return `${four(y)}-${two(m)}-${two(d)}`;
    case 'week': {
      const monday = new Date(Date.UTC(y, m - 1, d) - ((local.getUTCDay() + 6) % 7) * 86_400_000);
      return `${four(monday.getUTCFullYear())}-${two(monday.getUTCMonth() + 1)}-${two(monday.getUTCDate())}`;
    }
    case 'hour': {
      const sign = offset < 0 ? '-' : '+';
      const minutes = Math.floor(Math.abs(offset) / 60_000);
      return `${four(y)}-${two(m)}-${two(d)}T${two(local.getUTCHours())}:00${sign}${two(Math.floor(minutes / 60))}:${two(minutes % 60)}`;
    }
  }
}

/**
 * The label of the bucket of `unit` in zone `zoneName` that holds the ISO 8601 time `text`, or
 * null for a text that is not a time. Where the offset is the same through a 15-minute slot of
 * UTC and a whole number of 15 minutes (every offset in use today), every instant of the slot has
 * the same label, which is kept; elsewhere (a historical local mean time) it is made anew.
 */
export function timeBucketLabel(text: string, unit: TimeBucketUnit, zoneName: string): string | null {
  const zone = zoneOf(zoneName);
  // Only the form the server writes (2026-11-28T14:35:07.123Z) names its minute of UTC by its first 16 characters.
  const canonical = text.length === 24 && text.charCodeAt(23) === 90 /* Z */;
  const last = zone.last;
  if (canonical && last !== null && last.unit === unit && text.startsWith(last.minute)) return last.label;
  const ms = Date.parse(text);
  if (!Number.isFinite(ms)) return null;
  const slot = Math.floor(ms / SLOT_MS);
  const key = `${unit}${slot}`;
  let label = zone.labels.get(key);
  if (label === undefined) {
    const offset = offsetAt(zone, ms);
    const start = slot * SLOT_MS;
    if (offset % SLOT_MS !== 0 || offsetAt(zone, start) !== offset || offsetAt(zone, start + SLOT_MS - 1) !== offset) return labelAt(ms, offset, unit);
    if (zone.labels.size >= MAX_KEPT) zone.labels.clear();
    label = labelAt(start, offset, unit);
    zone.labels.set(key, label);
  }
  if (canonical) zone.last = { unit, minute: text.slice(0, 16), label };
  return label;
}

/** Registers plainbase_time_bucket(text, unit, zone) on the connection; connect.ts calls it for every connection it opens. */
export function enableSqliteTimeBuckets(connection: SqliteDatabase.Database): void {
  connection.function(SQLITE_TIME_BUCKET_FUNCTION, { deterministic: true }, (text: unknown, unit: unknown, zone: unknown) => {
    if (typeof text !== 'string' || typeof zone !== 'string' || !(TIME_BUCKET_UNITS as readonly unknown[]).includes(unit)) return null;
    return timeBucketLabel(text, unit as TimeBucketUnit, zone);
  });
}
