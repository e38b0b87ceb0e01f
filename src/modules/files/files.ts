import type { Readable } from 'node:stream';
import type { Deps } from '../../deps.js';
import type { CollectionsTable, Executor, FilesTable } from '../../db/schema.js';
import { AppError, invalidRequest, notFound } from '../../errors.js';
import { newId } from '../../ids.js';
import { fileStoreFor } from '../../storage/store-for.js';
import type { ByteRange } from '../../storage/file-store.js';
import { recordAudit } from '../audit/audit.js';
import { findCollection, type CollectionContext } from '../collections/collections.js';
import { unstorableTextReason } from '../../storable-text.js';
import { UploadMeter } from './upload-meter.js';

export interface FileView {
  id: string;
  collectionId: string;
  name: string;
  size: number;
  contentType: string;
  sha256: string;
  createdAt: string;
  /** Who uploaded it: a person, or a key (whose own audit entries say for whom). */
  createdBy: { type: string; id: string | null };
}

export function toFileView(row: FilesTable): FileView {
  return {
    id: row.id,
    collectionId: row.collection_id,
    name: row.name,
    size: Number(row.size),
    contentType: row.content_type,
    sha256: row.sha256,
    createdAt: row.created_at,
    createdBy: { type: row.created_by_type, id: row.created_by_id },
  };
}

export const MAX_NAME_LENGTH = 255;
// A media type as HTTP writes it: type/subtype, then parameters (RFC 9110 §8.3.1).
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const MEDIA_TYPE = new RegExp(`^${TOKEN}/${TOKEN}(\\s*;\\s*${TOKEN}=(${TOKEN}|"[^"\\\\\\u0000-\\u001f\\u007f]*"))*$`);
export const DEFAULT_CONTENT_TYPE = 'application/octet-stream';

/**
 * Unicode format characters (category Cf): bidirectional controls such as U+202E, which make
 * `invoice_\u202efdp.exe` display as `invoice_exe.pdf`, zero-width characters, the byte order
 * mark. They draw nothing of their own, so a name keeps its meaning without them and cannot
 * pass itself off as another.
 */
const FORMAT_CHARACTERS = /\p{Cf}/gu;

/** The name with every format character removed (docs/files.md). */
export function withoutFormatCharacters(name: string): string {
  return name.replace(FORMAT_CHARACTERS, '');
}

/**
 * A file's name is a label shown back and offered as the download's name; never a path on disk.
 * Control characters are refused; format characters are removed (the name stored is the one
 * returned).
 */
export function checkFileName(name: string, field: string): string {
  const problem =
    /[\u0000-\u001f\u007f-\u009f]/.test(name) ? 'contains a control character' :
    unstorableTextReason(name);
  if (problem) throw invalidRequest(`The file name ${problem}.`, { field });
  const shown = withoutFormatCharacters(name);
  const length =
    shown.length === 0 ? (name.length === 0 ? 'is empty' : 'is nothing but invisible format characters') :
    shown.length > MAX_NAME_LENGTH ? `is longer than ${MAX_NAME_LENGTH} characters` :
    null;
  if (length) throw invalidRequest(`The file name ${length}.`, { field });
  return shown;
}

export function checkContentType(contentType: string, field: string): string {
  if (contentType.length > 255 || !MEDIA_TYPE.test(contentType)) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'The content type is not a media type like image/png.', { field });
  }
  return contentType;
}

/** A file of the collection; a file of another collection or workspace is not found. */
export async function findFile(executor: Executor, collection: CollectionsTable, fileId: string): Promise<FilesTable> {
  const row = await executor
    .selectFrom('files')
    .selectAll()
    .where('workspace_id', '=', collection.workspace_id)
    .where('collection_id', '=', collection.id)
    .where('id', '=', fileId)
    .executeTakeFirst();
  if (!row) throw notFound('file');
  return row;
}

/** Writes made with a key are audited, as for records; a person's are told by what changed. */
export async function auditFileKeyWrite(executor: Executor, at: Date, context: CollectionContext, action: string, fileId: string, collectionId: string): Promise<void> {
  if (context.actor.type === 'person') return;
  await recordAudit(executor, at, context.meta, { workspaceId: context.workspaceId, actor: context.actor, action, target: { type: 'file', id: fileId }, details: { collectionId } });
}

export interface UploadInput {
  name: string;
  contentType: string;
  /** The content, read once as it arrives. */
  body: Readable;
  /** A lower limit than PLAINBASE_FILE_MAX_BYTES for this upload (what an anonymous submission has left). */
  maxBytes?: number;
}

/**
 * Streams an upload into the file store, counting and hashing it on the way, then writes its
 * row. The row goes in only after the content is complete; a failure at any point (the size
 * limit, the client leaving, the store) removes what was written, so nothing is left behind.
 */
export async function uploadFile(deps: Deps, context: CollectionContext, idOrName: string, input: UploadInput): Promise<FileView> {
  // Before a byte is read: no upload into a collection that is not there.
  const collection = await findCollection(deps.db, context.workspaceId, idOrName);
  const id = newId('fil', deps.clock.now().getTime());
  const storageKey = `${collection.workspace_id}/${collection.id}/${id}`;
  const meter = new UploadMeter(Math.min(deps.config.fileMaxBytes, input.maxBytes ?? Infinity));
  // An upload that failed already is failed here, before the store starts reading: the store's
  // write finds the meter errored and rejects with it; this keeps the error from going unheard
  // meanwhile (an unheard stream error would stop the process).
  meter.on('error', () => undefined);
  feed(input.body, meter);
  const store = fileStoreFor(deps);
  await store.write(storageKey, meter);

  const now = deps.clock.now();
  const row: FilesTable = {
    id,
    workspace_id: collection.workspace_id,
    collection_id: collection.id,
    name: input.name,
    size: meter.bytes,
    content_type: input.contentType,
    sha256: meter.sha256(),
    storage_key: storageKey,
    created_by_type: context.actor.type,
    created_by_id: context.actor.id,
    created_at: now.toISOString(),
  };
  try {
    await deps.db.transaction().execute(async (trx) => {
      // The collection may have gone to the trash, or for good, while the bytes arrived.
      await findCollection(trx, context.workspaceId, collection.id);
      await trx.insertInto('files').values(row).execute();
      await auditFileKeyWrite(trx, now, context, 'file.uploaded', id, collection.id);
    });
  } catch (error) {
    await store.remove(storageKey).catch(() => undefined);
    throw error;
  }
  return toFileView(row);
}

/**
 * Pipes the body into the meter. pipe, not pipeline: when the upload fails the request must stay
 * open for the error answer. A body that breaks off (the client left, a form cut short) fails
 * the meter, and with it the store's write.
 */
function feed(body: Readable, meter: UploadMeter): void {
  const interrupted = (error?: unknown) =>
    meter.destroy(error instanceof AppError ? error : invalidRequest('The upload ended before its last byte.', { field: 'body' }));
  if (body.destroyed && !body.readableEnded) {
    interrupted(body.errored);
    return;
  }
  body.once('error', interrupted);
  body.once('close', () => {
    if (!body.readableEnded) interrupted();
  });
  body.pipe(meter);
}

export async function getFile(deps: Deps, workspaceId: string, idOrName: string, fileId: string, options: { attachedOnly?: boolean } = {}): Promise<FilesTable> {
  const collection = await findCollection(deps.db, workspaceId, idOrName);
  const file = await findFile(deps.db, collection, fileId);
  if (options.attachedOnly && !(await isAttachedToLiveRecord(deps.db, file))) throw notFound('file');
  return file;
}

/** Public collections share the files their live records hold, and only those. */
async function isAttachedToLiveRecord(executor: Executor, file: FilesTable): Promise<boolean> {
  const row = await executor
    .selectFrom('record_files')
    .innerJoin('records', 'records.id', 'record_files.record_id')
    .select('record_files.record_id')
    .where('record_files.workspace_id', '=', file.workspace_id)
    .where('record_files.file_id', '=', file.id)
    .where('records.trashed_at', 'is', null)
    .executeTakeFirst();
  return row !== undefined;
}

export async function readFileContent(deps: Deps, file: FilesTable, range?: ByteRange): Promise<Readable> {
  return fileStoreFor(deps).read(file.storage_key, range);
}
