/** Someone whose spooled bytes are counted together: a caller, a workspace. */
export interface SpoolOwner {
  /** Unique among every owner of the quota, like `caller:key_…` or `workspace:ws_…`. */
  id: string;
  /** Most bytes its spools may hold on disk at once. */
  limit: number;
}

/** Why a spool may not grow: the owner it would take past its limit, and what the others hold. */
export interface SpoolOverflow {
  owner: SpoolOwner;
  /** Bytes this owner's other spools hold: 0 means this spool alone is larger than the limit. */
  heldByOthers: number;
}

/**
 * Bytes of spooled files on this process's disk, counted per owner while they exist. A spool
 * counts each chunk before it is written, so no owner's files ever hold more than its limit;
 * its claim is released when its file is removed.
 */
export class SpoolQuota {
  private readonly held = new Map<string, number>();

  /** Starts counting a new spool for all of `owners` (each must fit). */
  claim(owners: SpoolOwner[]): SpoolClaim {
    return new SpoolClaim(this.held, owners);
  }

  /** Bytes the owner's spools hold now. */
  heldBy(ownerId: string): number {
    return this.held.get(ownerId) ?? 0;
  }
}

export class SpoolClaim {
  private bytes = 0;
  private released = false;

  constructor(
    private readonly held: Map<string, number>,
    private readonly owners: SpoolOwner[],
  ) {}

  /**
   * Counts `size` more bytes, or counts nothing and says which owner it would take past its
   * limit. Adding 0 asks whether an owner is already at its limit (a spool must start below it).
   */
  grow(size: number): SpoolOverflow | null {
    if (this.released) throw new Error('a released spool claim cannot grow');
    for (const owner of this.owners) {
      const now = this.held.get(owner.id) ?? 0;
      if (size === 0 ? now >= owner.limit : now + size > owner.limit) return { owner, heldByOthers: now - this.bytes };
    }
    this.bytes += size;
    for (const owner of this.owners) this.held.set(owner.id, (this.held.get(owner.id) ?? 0) + size);
    return null;
  }

  /** Gives every byte back; harmless twice. */
  release(): void {
    if (this.released) return;
    this.released = true;
    for (const owner of this.owners) {
      const left = (this.held.get(owner.id) ?? 0) - this.bytes;
      if (left > 0) this.held.set(owner.id, left);
      else this.held.delete(owner.id);
    }
  }
}
