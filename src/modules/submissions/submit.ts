import { verifyCaptcha } from '../../delivery/captcha-verify.js';
import type { Deps } from '../../deps.js';
import type { CollectionsTable } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { originListed } from '../../origin-list.js';
import { hasPrefix, newId } from '../../ids.js';
import type { RequestMeta } from '../audit/audit.js';
import { storedSettings, type CollectionContext } from '../collections/collections.js';
import { storedSubmissions, type StoredSubmissions } from '../collections/submission-settings.js';
import { createRecord } from '../records/records.js';
import { toRecordSummary, type RecordData, type RecordSummary, type RecordView } from '../records/record-shape.js';

/** A collection that takes public submissions, as the gate found it. */
export interface SubmissionTarget {
  workspaceId: string;
  collectionId: string;
  submissions: StoredSubmissions;
}

/** What a submission's body becomes, whatever its content type (JSON here; forms: http/form-submission.ts). */
export interface SubmissionInput {
  data: RecordData;
  /** Ids of the files a multipart form brought, stored already (submission-files.ts); none for JSON. */
  files: string[];
  /** Where a form asks to be sent after it was accepted (303); null for JSON. */
  redirect: string | null;
  /** The CAPTCHA widget's answer: JSON's top-level `captchaToken`, or the provider's form field. */
  captchaToken: string | null;
}

/**
 * One answer for every collection an anonymous caller may not submit to (missing, in the trash,
 * submissions off, named by name): nobody can probe which collections exist.
 */
export const submissionsClosed = (): AppError =>
  new AppError('UNAUTHENTICATED', 'Sign in, or send an API key as "Authorization: Bearer <key>". (Anonymous submissions reach only a collection that takes them, named by its id.)');

const targetById = async (deps: Deps, id: string): Promise<CollectionsTable | undefined> =>
  deps.db.selectFrom('collections').selectAll().where('id', '=', id).where('trashed_at', 'is', null).executeTakeFirst();

/** The collection an anonymous submission names, if it takes submissions; otherwise the one 401. */
export async function findSubmissionTarget(deps: Deps, ref: string): Promise<SubmissionTarget> {
  if (!hasPrefix(ref, 'col')) throw submissionsClosed();
  const row = await targetById(deps, ref);
  const submissions = row ? storedSubmissions(storedSettings(row)) : null;
  if (!row || !submissions?.enabled) throw submissionsClosed();
  return { workspaceId: row.workspace_id, collectionId: row.id, submissions };
}

/** Whether a page of `origin` may submit: a request without an Origin header (a server, curl) may. */
export function originAllowed(submissions: StoredSubmissions, origin: string | undefined): boolean {
  return origin === undefined || originListed(submissions.origins, origin);
}

/**
 * The one place a submission's CAPTCHA is checked: the token goes to the provider
 * (delivery/captcha-verify.ts), and only its clear yes lets the submission through. A provider
 * that cannot be asked, or answers anything else, refuses it too (fail closed). Why is logged
 * for the operator, never the secret or the token.
 */
export async function checkCaptcha(deps: Deps, target: SubmissionTarget, input: SubmissionInput, remoteIp: string, log?: { warn(details: object, message: string): void }): Promise<void> {
  const { captcha } = target.submissions;
  if (!captcha) return;
  if (!input.captchaToken) throw captchaFailed('This form needs its CAPTCHA answered: send the token as captchaToken (or the widget\'s own form field).');
  const verdict = await verifyCaptcha(deps, { provider: captcha.provider, secret: captcha.secret, token: input.captchaToken, remoteIp });
  if (verdict.ok) return;
  log?.warn({ captcha: { provider: captcha.provider, reason: verdict.reason, detail: verdict.detail }, collectionId: target.collectionId }, 'CAPTCHA check refused a submission');
  if (verdict.reason === 'unavailable') throw captchaFailed('The CAPTCHA answer could not be verified: verification was unavailable. Try again in a moment.');
  throw captchaFailed('The CAPTCHA answer was not accepted. Answer it again and resubmit.');
}

export const captchaFailed = (message: string): AppError => new AppError('CAPTCHA_FAILED', message);

/** Whether the honeypot field was filled: anything but absent, null or empty text. */
export function honeypotFilled(submissions: StoredSubmissions, data: RecordData): boolean {
  const name = submissions.honeypot;
  if (name === undefined || !Object.hasOwn(data, name)) return false;
  const value = data[name];
  return value !== null && value !== undefined && value !== '';
}

/**
 * Stores an anonymous submission: the honeypot field is taken out (never stored), the active
 * schema applies (422 as for anyone), and the record's event and audit entry name an anonymous
 * actor with its address. Answers the record's summary only: an anonymous caller reads nothing back.
 */
export async function storeSubmission(deps: Deps, target: SubmissionTarget, input: SubmissionInput, meta: RequestMeta): Promise<RecordSummary> {
  const data: RecordData = { ...input.data };
  if (target.submissions.honeypot !== undefined) delete data[target.submissions.honeypot];
  const context = anonymousContext(target, meta);
  try {
    const { body } = await createRecord(deps, context, target.collectionId, data, { files: input.files });
    return toRecordSummary(body as RecordView, 1);
  } catch (error) {
    // Trashed or deleted since the gate found it: the same answer as if it had been then.
    if (error instanceof AppError && error.code === 'NOT_FOUND') throw submissionsClosed();
    throw error;
  }
}

/** Who an anonymous submission's writes are by: no one, from an address. */
export const anonymousContext = (target: SubmissionTarget, meta: RequestMeta): CollectionContext => ({
  workspaceId: target.workspaceId,
  actor: { type: 'anonymous' as const, id: null, name: null, ip: meta.ip },
  meta,
});

/** What a filled honeypot is answered: a summary like a stored record's, for a record that does not exist. */
export function decoySummary(deps: Deps, target: SubmissionTarget): RecordSummary {
  const now = deps.clock.now();
  const at = now.toISOString();
  return { id: newId('rec', now.getTime()), collectionId: target.collectionId, revision: 1, files: [], createdAt: at, updatedAt: at, trashedAt: null };
}
