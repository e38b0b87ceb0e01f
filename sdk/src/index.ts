// The package's public surface: everything a user imports from '@plainbase/sdk'.
export { Plainbase, Collection } from './plainbase.js';
export { PlainbaseError, type PlainbaseErrorCode, type SdkErrorCode } from './errors.js';
export { Records, RecordList, type ExportOptions, type ImportFormat, type ImportOptions, type ListOptions, type MergePatch, type PageOptions, type WriteOptions } from './records.js';
export { Events, type EventChoice, type EventListOptions, type SubscribeOptions, type Subscription } from './events.js';
export { Files, type DownloadOptions, type FileDownload, type UploadOptions } from './files.js';
export type { PlainbaseOptions } from './http.js';
export type { BodySource, OnProgress, Progress } from './request-body.js';
export type { FileInfo, HttpMethod, ImportReport, Me, Operation, PathsWith, PlainbaseRecord, RecordPage, RequestOptions, SuccessBody } from './api-types.js';
export type { components, operations, paths } from './generated/openapi.js';
export {
  signWebhook,
  verifyWebhook,
  WebhookVerificationError,
  type PlainbaseEvent,
  type RawBody,
  type VerifyOptions,
  type WebhookErrorReason,
  type WebhookHeaders,
} from './verify-webhook.js';
