import { Transform } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { AppError, invalidRequest, rateLimited } from '../errors.js';
import { countSubmission, type SubmissionOutcome } from '../modules/submissions/submission-counts.js';
import { checkCaptcha, decoySummary, findSubmissionTarget, honeypotFilled, originAllowed, storeSubmission, type SubmissionInput, type SubmissionTarget } from '../modules/submissions/submit.js';
import { activeSchemaOf } from '../modules/schemas/schema-versions.js';
import { checkContentType, checkFileName, DEFAULT_CONTENT_TYPE } from '../modules/files/files.js';
import type { RecordSummary } from '../modules/records/record-shape.js';
import { discardSubmissionFiles, storeSubmissionFile } from '../modules/submissions/submission-files.js';
import { originListed } from '../origin-list.js';
import { allowOrigin } from './cors.js';
import { errorHandler, toAppError } from './error-handler.js';
import { formFieldsToData, isFormBody, queryRedirect, readFormFields, redirectWithError } from './form-submission.js';
import { requestMeta } from './request-meta.js';

/**
 * Public submissions (docs/data-api.md, "Public submissions"): POST /v1/collections/{col_id}/records
 * without a credential, to a collection whose settings.submissions let it. The steps, in order:
 * 1. the gate (preParsing, before the body is read): the collection by id, taking submissions,
 *    else the same 401 as for any anonymous write; the page's origin (403 ORIGIN_NOT_ALLOWED);
 *    no Idempotency-Key (a replay would read a stored answer); the rates (429 RATE_LIMITED,
 *    submission-limiter.ts); the
 *    body's size (413, PLAINBASE_SUBMISSION_MAX_BYTES);
 * 2. the body becomes `{data, files, redirect, captchaToken}` (submissionInput);
 * 3. the honeypot (filled: 201 with a made-up summary, nothing stored), then the CAPTCHA
 *    (403 CAPTCHA_FAILED), then the record is stored (the active schema applies: 422);
 * 4. every outcome is counted for the collection's chart (onResponse, submission-counts.ts).
 */

interface SubmissionState {
  target: SubmissionTarget;
  /** Set where the reason is known; otherwise the answer's status tells it. */
  outcome: SubmissionOutcome | null;
  /** A form body (urlencoded or multipart), once read (readSubmissionForm). */
  form?: SubmittedForm;
}

interface SubmittedForm {
  /** Where the browser goes after the answer (303), checked against the collection's origins. */
  redirect: URL | null;
  /** Files stored from the form; removed again unless the submission ends in a record. */
  files: string[];
  honeypotFilled: boolean;
  /** The record holding the files was created. */
  kept?: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the gate for an anonymous submission. */
    submission?: SubmissionState;
  }
}

/** Whether a request to the create route is an anonymous submission (auth.ts let it through without a caller). */
export const isAnonymousSubmission = (request: FastifyRequest): boolean => request.auth.workspaceId === null;

function refuse(request: FastifyRequest, outcome: SubmissionOutcome, error: AppError): AppError {
  if (request.submission) request.submission.outcome = outcome;
  return error;
}

/** Step 1, the route's preParsing hook. */
export function gateSubmission(deps: Deps) {
  return async (request: FastifyRequest, reply: FastifyReply, payload: NodeJS.ReadableStream): Promise<NodeJS.ReadableStream> => {
    if (!isAnonymousSubmission(request)) return payload;
    const ref = (request.params as { col?: string }).col ?? '';
    const target = await findSubmissionTarget(deps, ref);
    request.submission = { target, outcome: null };
    const origin = request.headers.origin;
    if (!originAllowed(target.submissions, origin)) {
      throw refuse(request, 'ORIGIN_NOT_ALLOWED', new AppError('ORIGIN_NOT_ALLOWED', 'This collection does not take submissions from pages of this origin (settings.submissions.origins).'));
    }
    if (origin !== undefined && !originListed(deps.config.corsOrigins, origin)) allowOrigin(reply, origin);
    if (request.headers['idempotency-key'] !== undefined) {
      throw refuse(request, 'INVALID', invalidRequest('An anonymous submission cannot carry an Idempotency-Key: send the submission once, or use an API key.', { field: 'headers.idempotency-key' }));
    }
    const wait = await request.server.submissionLimiter.take(deps, target.collectionId, request.ip, target.submissions.ratePerMinute);
    if (wait) throw refuse(request, 'RATE_LIMITED', rateLimited(wait.retryAfterSeconds, 'Too many submissions to this collection; try again later.'));
    // A multipart form may carry files, which have their own limit (PLAINBASE_FILE_MAX_BYTES): its
    // parser (form-submission.ts) holds the fields to PLAINBASE_SUBMISSION_MAX_BYTES itself.
    if (isMultipart(request)) return payload;
    const limit = deps.config.submissionMaxBytes;
    const declared = Number(request.headers['content-length']);
    if (declared > limit) throw refuse(request, 'TOO_LARGE', tooLarge(limit));
    return limitedTo(payload, limit, () => refuse(request, 'TOO_LARGE', tooLarge(limit)));
  };
}

const isMultipart = (request: FastifyRequest): boolean => /^multipart\/form-data\b/i.test(request.headers['content-type'] ?? '');

const submissionFilesTooLarge = (limit: number) =>
  new AppError('PAYLOAD_TOO_LARGE', `The files of an anonymous submission may come to at most ${limit} bytes together (PLAINBASE_SUBMISSION_MAX_FILE_BYTES).`, { limitBytes: limit });

export const tooLarge = (limit: number) => new AppError('PAYLOAD_TOO_LARGE', `An anonymous submission may be at most ${limit} bytes (PLAINBASE_SUBMISSION_MAX_BYTES).`, { limitBytes: limit });

/** The body, failing with `error()` past `limit` bytes (a body sent without a Content-Length). */
function limitedTo(payload: NodeJS.ReadableStream, limit: number, error: () => AppError): NodeJS.ReadableStream {
  let received = 0;
  const limited = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      received += chunk.length;
      done(received > limit ? error() : null, chunk);
    },
  });
  payload.on('error', (cause) => limited.destroy(cause));
  return payload.pipe(limited);
}

/**
 * Step 2: what the body says, whatever its form. A JSON body is `{data, captchaToken?}` (checked
 * by the route's schema). Form bodies (urlencoded, multipart) are http/form-submission.ts's.
 */
export function submissionInput(request: FastifyRequest): SubmissionInput {
  const body = request.body as { data: Record<string, unknown>; captchaToken?: string };
  const form = request.submission?.form;
  return { data: body.data, files: form?.files ?? [], redirect: form?.redirect?.toString() ?? null, captchaToken: body.captchaToken ?? null };
}

/**
 * Step 2 for forms, the route's preValidation hook: an urlencoded or multipart body becomes the
 * `{data, captchaToken}` a JSON body would have been (form-submission.ts), with the form's files
 * stored and its redirect checked. Forms are for public submissions: with a credential, 415.
 * `?redirect=` is for forms only.
 */
export function readSubmissionForm(deps: Deps) {
  return async (request: FastifyRequest): Promise<void> => {
    const kind = isFormBody(request);
    const state = request.submission;
    if (!kind) {
      if (queryRedirect(request) !== null) throw invalidRequest('?redirect= is for form submissions (urlencoded or multipart) without a credential.', { field: 'querystring.redirect' });
      return;
    }
    if (!state) {
      const type = request.headers['content-type'] ?? '';
      throw new AppError(
        'UNSUPPORTED_MEDIA_TYPE',
        `With a credential, this route takes a JSON body: send it as Content-Type: application/json (this request sent Content-Type ${JSON.stringify(type.split(';')[0]!.trim())}). Forms are taken only as public submissions, without a credential.`,
        { contentType: type },
      );
    }
    const form: SubmittedForm = { redirect: null, files: [], honeypotFilled: false };
    state.form = form;
    const meta = requestMeta(request);
    const { target } = state;
    let read;
    let fileBytes = 0;
    try {
      read = await readFormFields(request, kind, {
        origins: target.submissions.origins,
        honeypot: target.submissions.honeypot ?? null,
        fileMaxBytes: deps.config.fileMaxBytes,
        fieldBytes: deps.config.submissionMaxBytes,
        stored: form.files,
        storeFile: async (part) => {
          // The files of one submission share PLAINBASE_SUBMISSION_MAX_FILE_BYTES: an anonymous
          // form may not fill the disk ten files of PLAINBASE_FILE_MAX_BYTES at a time.
          const budget = deps.config.submissionFileBytes - fileBytes;
          const bindsHere = budget < deps.config.fileMaxBytes;
          try {
            const stored = await storeSubmissionFile(deps, target, meta, {
              name: checkFileName(part.name, `body.${part.field}`),
              contentType: checkContentType(part.contentType || DEFAULT_CONTENT_TYPE, `body.${part.field}`),
              body: part.body,
              maxBytes: budget,
            });
            fileBytes += stored.size;
            return stored.id;
          } catch (error) {
            if (bindsHere && error instanceof AppError && error.code === 'PAYLOAD_TOO_LARGE') throw submissionFilesTooLarge(deps.config.submissionFileBytes);
            throw error;
          }
        },
      });
    } catch (error) {
      // A form that breaks off (the client gone, too many parts): its files go now, since no
      // answer may reach onResponse.
      await discardSubmissionFiles(deps, target, meta, form.files.splice(0)).catch((cause: unknown) => request.log.error({ err: cause }, 'the files of a broken form could not be removed'));
      throw error;
    }
    form.redirect = read.redirectUrl;
    form.honeypotFilled = read.honeypotFilled;
    const data = read.honeypotFilled ? {} : formFieldsToData(read.fields, await activeSchemaOf(deps.db, target.workspaceId, target.collectionId));
    request.body = { data, ...(read.captchaToken === null ? {} : { captchaToken: read.captchaToken }) };
  };
}

/** The answer to a submission taken (or seemingly taken): 303 to the form's redirect, else 201 with the summary. */
function answerTaken(reply: FastifyReply, state: SubmissionState, summary: RecordSummary) {
  const redirect = state.form?.redirect;
  if (!redirect) return reply.status(201).send(summary);
  state.outcome ??= 'ACCEPTED';
  return reply.status(303).header('location', redirect.toString()).send();
}

/** What a refusal counts as when its answer is a redirect, whose status says nothing. */
function outcomeOfError(error: AppError): SubmissionOutcome {
  if (error.code === 'CAPTCHA_FAILED' || error.code === 'RATE_LIMITED' || error.code === 'ORIGIN_NOT_ALLOWED') return error.code;
  return error.status === 413 ? 'TOO_LARGE' : 'INVALID';
}

/**
 * The create route's error handler: a form that named a redirect (checked) is sent back there on
 * a refusal, with `?error=CODE`, so a page without JavaScript can say what went wrong; every
 * other refusal, and every failure of the service itself, is answered as usual.
 */
export function submissionErrorHandler() {
  const usual = errorHandler();
  return (error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const state = request.submission;
    const redirect = state?.form?.redirect;
    const appError = toAppError(error);
    if (!state || !redirect || appError.status >= 500) return usual(error, request, reply);
    state.outcome ??= outcomeOfError(appError);
    return reply.status(303).header('location', redirectWithError(redirect, appError.code)).send();
  };
}

/** The route's onResponse hook: a form's files stay only with the record they came for. */
export function discardUnkeptFiles(deps: Deps) {
  return async (request: FastifyRequest): Promise<void> => {
    const state = request.submission;
    if (!state?.form?.files.length || state.form.kept) return;
    try {
      await discardSubmissionFiles(deps, state.target, requestMeta(request), state.form.files);
    } catch (error) {
      request.log.error({ err: error, files: state.form.files }, 'the files of a refused submission could not be removed');
    }
  };
}

/** Steps 2 and 3: the create route's handler for an anonymous caller. */
export function handleSubmission(deps: Deps): (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply> {
  return async (request, reply) => {
    const state = request.submission;
    // The gate ran for every anonymous create; without it nothing here may run.
    if (!state) throw new Error('an anonymous submission reached its handler without the gate');
    const input = submissionInput(request);
    if (state.form?.honeypotFilled || honeypotFilled(state.target.submissions, input.data)) {
      state.outcome = 'HONEYPOT';
      return answerTaken(reply, state, decoySummary(deps, state.target));
    }
    try {
      await checkCaptcha(deps, state.target, input, request.ip, request.log);
    } catch (error) {
      if (error instanceof AppError && error.code === 'CAPTCHA_FAILED') state.outcome = 'CAPTCHA_FAILED';
      throw error;
    }
    const summary = await storeSubmission(deps, state.target, input, requestMeta(request));
    if (state.form) state.form.kept = true;
    return answerTaken(reply, state, summary);
  };
}

const OUTCOME_OF_STATUS: Record<number, SubmissionOutcome> = { 201: 'ACCEPTED', 400: 'INVALID', 413: 'TOO_LARGE', 415: 'INVALID', 422: 'INVALID', 429: 'RATE_LIMITED' };

/** Step 4, the route's onResponse hook: one count per anonymous submission that reached a collection. */
export function countSubmissionOutcome(deps: Deps) {
  return (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    const state = request.submission;
    if (state) {
      const outcome = state.outcome ?? OUTCOME_OF_STATUS[reply.statusCode];
      if (outcome) countSubmission(deps, state.target, outcome);
    }
    done();
  };
}
