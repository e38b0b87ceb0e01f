import { Transform } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { AppError, invalidRequest, rateLimited } from '../errors.js';
import { countSubmission, type SubmissionOutcome } from '../modules/submissions/submission-counts.js';
import { takeSubmission } from '../modules/submissions/submission-limits.js';
import { checkCaptcha, decoySummary, findSubmissionTarget, honeypotFilled, originAllowed, storeSubmission, type SubmissionInput, type SubmissionTarget } from '../modules/submissions/submit.js';
import { allowOrigin, listedOrigin } from './cors.js';
import { requestMeta } from './request-meta.js';

/**
 * Public submissions (docs/data-api.md, "Public submissions"): POST /v1/collections/{col_id}/records
 * without a credential, to a collection whose settings.submissions let it. The steps, in order:
 * 1. the gate (preParsing, before the body is read): the collection by id, taking submissions,
 *    else the same 401 as for any anonymous write; the page's origin (403 ORIGIN_NOT_ALLOWED);
 *    no Idempotency-Key (a replay would read a stored answer); the rates (429 RATE_LIMITED); the
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
    if (origin !== undefined && !listedOrigin(deps.config.corsOrigins, origin)) allowOrigin(reply, origin);
    if (request.headers['idempotency-key'] !== undefined) {
      throw refuse(request, 'INVALID', invalidRequest('An anonymous submission cannot carry an Idempotency-Key: send the submission once, or use an API key.', { field: 'headers.idempotency-key' }));
    }
    const wait = takeSubmission(deps, target.collectionId, request.ip, target.submissions.ratePerMinute);
    if (wait) throw refuse(request, 'RATE_LIMITED', rateLimited(wait.retryAfterSeconds, 'Too many submissions to this collection; try again later.'));
    const limit = deps.config.submissionMaxBytes;
    const declared = Number(request.headers['content-length']);
    if (declared > limit) throw refuse(request, 'TOO_LARGE', tooLarge(limit));
    return limitedTo(payload, limit, () => refuse(request, 'TOO_LARGE', tooLarge(limit)));
  };
}

const tooLarge = (limit: number) => new AppError('PAYLOAD_TOO_LARGE', `An anonymous submission may be at most ${limit} bytes (PLAINBASE_SUBMISSION_MAX_BYTES).`, { limitBytes: limit });

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
  return { data: body.data, files: [], redirect: null, captchaToken: body.captchaToken ?? null };
}

/** Steps 2 and 3: the create route's handler for an anonymous caller. */
export function handleSubmission(deps: Deps): (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply> {
  return async (request, reply) => {
    const state = request.submission;
    // The gate ran for every anonymous create; without it nothing here may run.
    if (!state) throw new Error('an anonymous submission reached its handler without the gate');
    const input = submissionInput(request);
    if (honeypotFilled(state.target.submissions, input.data)) {
      state.outcome = 'HONEYPOT';
      return reply.status(201).send(decoySummary(deps, state.target));
    }
    try {
      await checkCaptcha(deps, state.target, input, request.ip);
    } catch (error) {
      if (error instanceof AppError && error.code === 'CAPTCHA_FAILED') state.outcome = 'CAPTCHA_FAILED';
      throw error;
    }
    const summary = await storeSubmission(deps, state.target, input, requestMeta(request));
    return reply.status(201).send(summary);
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
