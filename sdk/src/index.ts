// The package's public surface: everything a user imports from '@plainbase/sdk'. Browsers get
// browser.ts instead (the `browser` condition of package.json), the same surface with nothing of Node.js.
export * from './client.js';
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
