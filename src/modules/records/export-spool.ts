import path from 'node:path';
import { pipeline, Transform, type Readable } from 'node:stream';
import type { Deps } from '../../deps.js';
import { AppError } from '../../errors.js';
import { isDiskError, spoolToFile, type SpooledFile } from '../../storage/spool-file.js';
import type { SpoolClaim, SpoolOverflow } from '../../spool-quota.js';

/**
 * An export's file in `<data folder>/exports`, bounded three ways: its bytes count against its
 * caller's and its workspace's share of the disk (PLAINBASE_EXPORT_SPOOL_PER_CALLER and
 * _PER_WORKSPACE) from the first byte written until the file is removed; the file is removed
 * when its download ends, fails or is cut off; and a download that takes nothing for
 * PLAINBASE_EXPORT_STALL_SECONDS is cut off, so a client that never reads cannot keep it.
 */
export class ExportSpool {
  private file: SpooledFile | null = null;
  private done = false;

  private constructor(
    private readonly deps: Deps,
    private readonly claim: SpoolClaim,
  ) {}

  /** Opens the caller's share before any work; refused when the caller or workspace is at its limit. */
  static open(deps: Deps, workspaceId: string, caller: string): ExportSpool {
    const claim = deps.services.exportSpool.claim([
      { id: `caller:${caller}`, limit: deps.config.exportSpoolBytesPerCaller },
      { id: `workspace:${workspaceId}`, limit: deps.config.exportSpoolBytesPerWorkspace },
    ]);
    const spool = new ExportSpool(deps, claim);
    const overflow = claim.grow(0);
    if (overflow) throw spool.refusal(overflow);
    return spool;
  }

  /** Writes the export, every chunk counted before it reaches the disk. */
  async write(chunks: AsyncIterable<string>): Promise<void> {
    try {
      this.file = await spoolToFile(this.counted(chunks), path.join(this.deps.config.dataDir, 'exports'));
    } catch (error) {
      if (!isDiskError(error)) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      throw new AppError('UNAVAILABLE', `The server cannot hold the export on its disk (${code} in PLAINBASE_DATA_DIR); try again later.`);
    }
  }

  /**
   * The file from its start, for the answer; removed once read to the end, destroyed (the
   * client went away) or stalled. Call once, after write.
   */
  download(): Readable {
    const file = this.file!.read();
    const stallMs = this.deps.config.exportStallMs;
    // Progress is a chunk taken by the answer: a client that stops reading fills the socket, the
    // answer stops taking chunks, and the timer runs out.
    const timer = setTimeout(() => body.destroy(new Error(`the export's download took nothing for ${stallMs / 1000} s`)), stallMs);
    // A stalled download must not keep the process alive at shutdown.
    timer.unref();
    const body = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        timer.refresh();
        callback(null, chunk);
      },
    });
    body.once('close', () => clearTimeout(timer));
    pipeline(file, body, () => {
      clearTimeout(timer);
      void this.discard();
    });
    return body;
  }

  /** Removes the file, if any, and gives its bytes back; harmless twice. */
  async discard(): Promise<void> {
    if (this.done) return;
    this.done = true;
    try {
      await this.file?.remove();
    } finally {
      this.claim.release();
    }
  }

  private async *counted(chunks: AsyncIterable<string>): AsyncGenerator<Buffer> {
    for await (const chunk of chunks) {
      const bytes = Buffer.from(chunk);
      const overflow = this.claim.grow(bytes.length);
      if (overflow) throw this.refusal(overflow);
      yield bytes;
    }
  }

  /**
   * Past a limit because of other exports still held: 429, worth trying again once they are
   * downloaded or cut off (within the stall time if nobody reads them). Past it alone: 409,
   * since trying again cannot help; a filter makes the export smaller.
   */
  private refusal({ owner, heldByOthers }: SpoolOverflow): AppError {
    const scope = owner.id.startsWith('caller:') ? 'caller' : 'workspace';
    const setting = scope === 'caller' ? 'PLAINBASE_EXPORT_SPOOL_PER_CALLER' : 'PLAINBASE_EXPORT_SPOOL_PER_WORKSPACE';
    const whose = scope === 'caller' ? 'this caller\'s' : 'this workspace\'s';
    if (heldByOthers === 0) {
      return new AppError('CONFLICT', `This export is larger than ${whose} limit of ${owner.limit} bytes of exports held on the server (${setting}); export less at once, with a filter.`, {
        limit: owner.limit,
        scope,
      });
    }
    const retryAfterSeconds = Math.max(1, Math.ceil(this.deps.config.exportStallMs / 1000));
    return new AppError(
      'RATE_LIMITED',
      `${scope === 'caller' ? 'This caller\'s' : 'This workspace\'s'} exports not yet downloaded hold ${heldByOthers} bytes on the server, and this one would pass the limit of ${owner.limit} (${setting}); download or cancel them first.`,
      { retryAfterSeconds, limit: owner.limit, scope },
      { 'retry-after': String(retryAfterSeconds) },
    );
  }
}
