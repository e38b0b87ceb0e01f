/**
 * A list answer's byte budget (PLAINBASE_PAGE_BYTES): items are taken in order while the answer
 * stays within it, and a page always holds at least one item, however large, so every list can
 * be walked to its end. Records lists keep their own count (they also bound what they read);
 * every other list counts with this.
 */

/** Room for `{"data":[],"nextCursor":"…"}` around the items, with a long cursor. */
export const PAGE_FRAME_BYTES = 512;

export class PageBudget {
  private used = PAGE_FRAME_BYTES;
  private items = 0;

  constructor(private readonly budgetBytes: number) {}

  /**
   * Whether an item of `bytes` (its JSON, UTF-8) still fits, counting it in when it does. The
   * first item always fits; one comma per item after it.
   */
  admits(bytes: number): boolean {
    const size = bytes + (this.items > 0 ? 1 : 0);
    if (this.items > 0 && this.used + size > this.budgetBytes) return false;
    this.used += size;
    this.items += 1;
    return true;
  }
}

/** The bytes of a value written as JSON: an upper bound on what a response schema serialises of it. */
export const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value) ?? '');
