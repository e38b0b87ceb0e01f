/** Time comes through a clock so that tests can move it instead of sleeping. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that stands still until moved; for tests. */
export class ManualClock implements Clock {
  private current: number;

  constructor(start: Date | string = '2026-11-22T10:00:00.000Z') {
    this.current = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.current);
  }

  advance(milliseconds: number): void {
    this.current += milliseconds;
  }
}

export const isoTime = (date: Date): string => date.toISOString();
