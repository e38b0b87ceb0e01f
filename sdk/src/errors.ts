import type { components } from './generated/openapi.js';

/** The API's error body (docs/design.md §2 of the server): `{"error": {code, message, requestId, details?}}`. */
type ApiError = components['schemas']['Error']['error'];

/**
 * The codes the SDK raises itself, beside the API's own: no answer at all (the connection
 * failed), an answer that is not the API's error body (a proxy's error page), and a webhook
 * delivery that is not genuine.
 */
export type SdkErrorCode = 'NETWORK_ERROR' | 'UNEXPECTED_RESPONSE' | 'WEBHOOK_VERIFICATION_FAILED';

export type PlainbaseErrorCode = ApiError['code'] | SdkErrorCode;

export interface PlainbaseErrorInit {
  code: PlainbaseErrorCode;
  message: string;
  /** The HTTP status of the answer; 0 when there was none. */
  status: number;
  requestId?: string | null;
  details?: Record<string, unknown> | null;
  cause?: unknown;
}

/**
 * Every failure of a call, as one class: the API's error body when there is one (`code`,
 * `status`, `requestId` to quote to an operator, `details` such as `requiredScope`), or one of
 * the SDK's own codes.
 */
export class PlainbaseError extends Error {
  override readonly name: string = 'PlainbaseError';
  readonly code: PlainbaseErrorCode;
  readonly status: number;
  readonly requestId: string | null;
  readonly details: Record<string, unknown> | null;

  constructor(init: PlainbaseErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.code = init.code;
    this.status = init.status;
    this.requestId = init.requestId ?? null;
    this.details = init.details ?? null;
  }
}

/** The error an answer that is not 2xx stands for. Reads the body. */
export async function errorFromResponse(response: Response): Promise<PlainbaseError> {
  const requestId = response.headers.get('x-request-id');
  const text = await response.text().catch(() => '');
  const error = parseErrorBody(text);
  if (error) {
    return new PlainbaseError({ code: error.code, message: error.message, status: response.status, requestId: error.requestId ?? requestId, details: error.details ?? null });
  }
  return new PlainbaseError({
    code: 'UNEXPECTED_RESPONSE',
    message: `The server answered ${[response.status, response.statusText].filter(Boolean).join(' ')} without an error body of the Plainbase API.`,
    status: response.status,
    requestId,
    details: { body: text.slice(0, 1024) },
  });
}

function parseErrorBody(text: string): ApiError | null {
  try {
    const parsed: unknown = JSON.parse(text);
    const error = typeof parsed === 'object' && parsed !== null && Object.hasOwn(parsed, 'error') ? (parsed as { error: unknown }).error : null;
    if (typeof error !== 'object' || error === null) return null;
    const { code, message } = error as Partial<ApiError>;
    return typeof code === 'string' && typeof message === 'string' ? (error as ApiError) : null;
  } catch {
    return null;
  }
}
