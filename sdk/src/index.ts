export { signWebhook, verifyWebhook, WebhookVerificationError, type PlainbaseEvent, type VerifyOptions, type WebhookErrorReason } from './verify-webhook.js';
