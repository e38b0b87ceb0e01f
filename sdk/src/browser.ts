// The package's public surface in browsers (the `browser` condition of package.json, or
// '@plainbase/sdk/browser'): index.ts's, with a webhook verifier that never reaches for Node.js.
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
} from './verify-webhook-browser.js';
