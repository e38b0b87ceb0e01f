import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, expect, it, vi } from 'vitest';
import { DiskStore } from '../src/storage/disk-store.js';
import { spoolToFile } from '../src/storage/spool-file.js';

/**
 * A write whose source fails must leave no temporary file, however early it fails: the file is
 * opened asynchronously while the source may already have failed, and a pipeline can settle
 * before the file is open (DiskStore and spoolToFile wait for it to close before removing it).
 * The last two tests make that order certain by holding the file's open; without the wait they
 * leave the file every time (checked), as refused uploads and imports once did on busy machines.
 */
const failingAtOnce = () => new Readable({ read() { this.destroy(new Error('the client went away')); } });

let root: string | undefined;
afterEach(() => {
  vi.restoreAllMocks();
  if (root) fs.rmSync(root, { recursive: true, force: true });
  root = undefined;
});

it('leaves no temporary file when the source fails at once, many times over', async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'plainbase-disk-store-'));
  const store = new DiskStore(root);
  const writes = Array.from({ length: 200 }, (_, i) => store.write(`ws_test/file_${i}`, failingAtOnce()));
  const results = await Promise.allSettled(writes);
  expect(results.every((result) => result.status === 'rejected')).toBe(true);
  expect(fs.readdirSync(path.join(root, 'tmp'))).toEqual([]);
  expect(fs.existsSync(path.join(root, 'objects', 'ws_test'))).toBe(false);
});

it('still keeps what a source that ends well wrote', async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'plainbase-disk-store-'));
  const store = new DiskStore(root);
  await store.write('ws_test/file_ok', Readable.from([Buffer.from('hello')]));
  expect(fs.readFileSync(path.join(root, 'objects', 'ws_test', 'file_ok'), 'utf8')).toBe('hello');
  expect(fs.readdirSync(path.join(root, 'tmp'))).toEqual([]);
});

/**
 * Runs `write` with every open of a file under `folder` held (fs.open, which file streams use, and
 * fs/promises' open, which DurableFileWriter uses), as a busy disk or thread pool may, lets the
 * opens go after 100 ms, and answers how the write ended and whether it was still waiting then.
 */
async function withOpensHeld(folder: string, write: () => Promise<unknown>): Promise<{ outcome: string; waitedForOpen: boolean }> {
  const held: (() => void)[] = [];
  const realOpen = fs.open;
  vi.spyOn(fs, 'open').mockImplementation(((file: fs.PathLike, ...rest: unknown[]) => {
    const openNow = () => (realOpen as (...args: unknown[]) => void)(file, ...rest);
    if (String(file).startsWith(folder)) held.push(openNow);
    else openNow();
  }) as typeof fs.open);
  const realPromiseOpen = fsp.open;
  vi.spyOn(fsp, 'open').mockImplementation((file, ...rest) => {
    if (!String(file).startsWith(folder)) return realPromiseOpen(file, ...rest);
    return new Promise((resolve, reject) => held.push(() => realPromiseOpen(file, ...rest).then(resolve, reject)));
  });
  const settled = write().then(() => 'written', () => 'refused');
  // The write may settle only once its file was opened and closed.
  const first = await Promise.race([settled, new Promise((resolve) => setTimeout(() => resolve('waiting'), 100))]);
  expect(held.length).toBeGreaterThan(0);
  for (const openNow of held.splice(0)) openNow();
  const outcome = await settled;
  // Long enough for a late open to create its file, were it left to.
  await new Promise((resolve) => setTimeout(resolve, 200));
  return { outcome, waitedForOpen: first === 'waiting' };
}

it('leaves no temporary file when the source fails before the file is even open', async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'plainbase-disk-store-'));
  const store = new DiskStore(root);
  await store.write('ws_test/file_warm', Readable.from([Buffer.from('makes the folders')]));
  const { outcome, waitedForOpen } = await withOpensHeld(root, () => store.write('ws_test/file_late', failingAtOnce()));
  expect(outcome).toBe('refused');
  expect(fs.readdirSync(path.join(root, 'tmp'))).toEqual([]);
  expect(waitedForOpen).toBe(true);
});

it('leaves no spool file when the body fails before the file is even open', async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'plainbase-spool-'));
  const folder = path.join(root, 'spool');
  await (await spoolToFile(Readable.from([Buffer.from('makes the folder')]), folder)).remove();
  const { outcome, waitedForOpen } = await withOpensHeld(folder, () => spoolToFile(failingAtOnce(), folder));
  expect(outcome).toBe('refused');
  expect(fs.readdirSync(folder)).toEqual([]);
  expect(waitedForOpen).toBe(true);
});
