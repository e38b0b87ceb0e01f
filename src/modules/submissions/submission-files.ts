import type { Deps } from '../../deps.js';
import { AppError } from '../../errors.js';
import type { RequestMeta } from '../audit/audit.js';
import { deleteFile } from '../attachments/delete-file.js';
import { uploadFile, type UploadInput } from '../files/files.js';
import { anonymousContext, type SubmissionTarget } from './submit.js';

/**
 * The files of a multipart form submission. Each is stored as it arrives (a file is never held
 * in memory), before the rest of the form is read: the record that holds them is created at the
 * end, in one transaction with their attachments. A submission that does not end in a record
 * (refused by the CAPTCHA or the schema, a filled honeypot, a form cut short) has its files
 * removed again (discardSubmissionFiles), so nothing of it is kept.
 */
export async function storeSubmissionFile(deps: Deps, target: SubmissionTarget, meta: RequestMeta, input: UploadInput): Promise<string> {
  const file = await uploadFile(deps, anonymousContext(target, meta), target.collectionId, input);
  return file.id;
}

/** Removes files a submission stored but did not keep; a file (or collection) already gone is no error. */
export async function discardSubmissionFiles(deps: Deps, target: SubmissionTarget, meta: RequestMeta, fileIds: readonly string[]): Promise<void> {
  for (const fileId of fileIds) {
    try {
      await deleteFile(deps, anonymousContext(target, meta), target.collectionId, fileId);
    } catch (error) {
      if (!(error instanceof AppError && error.code === 'NOT_FOUND')) throw error;
    }
  }
}
