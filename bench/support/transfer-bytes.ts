import { createHash } from 'node:crypto';

/**
 * The bytes bench/files.ts moves: a 1 MiB block of pseudo-random bytes (SHA-256 in counter mode,
 * so every process makes the same block without sharing it), repeated. Random, so no layer on the
 * way can shrink it.
 */
export const BLOCK_BYTES = 1024 * 1024;
/** What one write hands the socket, on both sides of every comparison. */
export const CHUNK_BYTES = 256 * 1024;

export function transferBlock(): Buffer {
  const block = Buffer.alloc(BLOCK_BYTES);
  for (let offset = 0, counter = 0; offset < BLOCK_BYTES; offset += 32, counter++) {
    createHash('sha256').update(`plainbase bench ${counter}`).digest().copy(block, offset);
  }
  return block;
}

/** The chunks of `size` bytes of the repeated block. */
export function* transferChunks(block: Buffer, size: number): Generator<Buffer> {
  for (let sent = 0; sent < size; sent += CHUNK_BYTES) {
    const at = sent % BLOCK_BYTES;
    yield block.subarray(at, at + Math.min(CHUNK_BYTES, size - sent));
  }
}
