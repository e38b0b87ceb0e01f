import type { RegisterRoute } from './app-type.js';
import { registerChangePassword } from './routes/auth/change-password.js';
import { registerEndSession } from './routes/auth/end-session.js';
import { registerListSessions } from './routes/auth/list-sessions.js';
import { registerSignOutEverywhere } from './routes/auth/sign-out-everywhere.js';
import { registerGetSession } from './routes/auth/get-session.js';
import { registerCompleteSetup, registerGetSetup } from './routes/auth/setup.js';
import { registerSignIn } from './routes/auth/sign-in.js';
import { registerSignOut } from './routes/auth/sign-out.js';
import { registerListAuditLog } from './routes/audit-log/list-audit-log.js';
import { registerDownloadBackup, registerListBackups, registerStartBackup } from './routes/backups/backup-routes.js';
import { registerAcceptInvite } from './routes/invites/accept-invite.js';
import { registerCreateInvite } from './routes/invites/create-invite.js';
import { registerListInvites } from './routes/invites/list-invites.js';
import { registerPreviewInvite } from './routes/invites/preview-invite.js';
import { registerRevokeInvite } from './routes/invites/revoke-invite.js';
import { registerListMembers } from './routes/members/list-members.js';
import { registerRemoveMember } from './routes/members/remove-member.js';
import { registerUpdateMember } from './routes/members/update-member.js';
import { registerCreateCollection } from './routes/collections/create-collection.js';
import { registerDeleteCollection } from './routes/collections/delete-collection.js';
import { registerGetCollection } from './routes/collections/get-collection.js';
import { registerListCollections } from './routes/collections/list-collections.js';
import { registerRestoreCollection } from './routes/collections/restore-collection.js';
import { registerUpdateCollection } from './routes/collections/update-collection.js';
import { registerGetSubmissionCounts } from './routes/collections/submission-counts.js';
import { registerBulkDeleteRecords, registerBulkUpdateRecords } from './routes/records/bulk-changes.js';
import { registerCreateRecord } from './routes/records/create-record.js';
import { registerDeleteRecord } from './routes/records/delete-record.js';
import { registerExportRecords } from './routes/records/export-records.js';
import { registerGetRecord } from './routes/records/get-record.js';
import { registerImportRecords } from './routes/records/import-records.js';
import { registerRestoreRecord } from './routes/records/restore-record.js';
import { registerRevertActor } from './routes/history/revert-actor.js';
import { registerGetRecordVersion, registerListRecordVersions, registerRestoreRecordVersion } from './routes/records/record-versions.js';
import { registerMergeRecord, registerReplaceRecord } from './routes/records/update-record.js';
import { registerCheckSchemaVersion } from './routes/schemas/check-schema-version.js';
import { registerCreateSchemaVersion } from './routes/schemas/create-schema-version.js';
import { registerGetSchemaVersion } from './routes/schemas/get-schema-version.js';
import { registerListSchemaVersions } from './routes/schemas/list-schema-versions.js';
import { registerActivateSchemaVersion, registerDeactivateSchemaVersion } from './routes/schemas/switch-schema-version.js';
import { registerCreateKey } from './routes/keys/create-key.js';
import { registerGetKey } from './routes/keys/get-key.js';
import { registerListKeys } from './routes/keys/list-keys.js';
import { registerRevokeKey } from './routes/keys/revoke-key.js';
import { registerRotateKey } from './routes/keys/rotate-key.js';
import { registerListEvents } from './routes/events/list-events.js';
import { registerStreamEvents } from './routes/events/stream-events.js';
import { registerGetMe } from './routes/me/get-me.js';
import {
  registerCreateServiceAccount,
  registerDeleteServiceAccount,
  registerListServiceAccounts,
  registerUpdateServiceAccount,
} from './routes/service-accounts/service-account-routes.js';
import { registerGetDelivery, registerListDeliveries, registerReplayDelivery } from './routes/webhooks/delivery-routes.js';
import { registerRetryFailedDeliveries, registerWebhookHealth } from './routes/webhooks/health-routes.js';
import {
  registerCreateWebhook,
  registerDeleteWebhook,
  registerDisableWebhook,
  registerEnableWebhook,
  registerGetWebhook,
  registerListWebhooks,
  registerPingWebhook,
  registerRotateWebhookSecret,
  registerUpdateWebhook,
} from './routes/webhooks/webhook-routes.js';
import { registerCreateIndex, registerDeleteIndex, registerListIndexes } from './routes/indexes/index-routes.js';
import { registerAttachFile, registerDetachFile } from './routes/files/attachment-routes.js';
import { registerDeleteFile } from './routes/files/delete-file.js';
import { registerDownloadFile } from './routes/files/download-file.js';
import { registerGetFile } from './routes/files/get-file.js';
import { registerListFiles } from './routes/files/list-files.js';
import { registerUploadFile } from './routes/files/upload-file.js';
import { registerListRecords } from './routes/records/list-records.js';
import { registerAggregateRecords } from './routes/records/aggregate-records.js';
import { registerCreateWorkspace } from './routes/workspaces/create-workspace.js';
import { registerListWorkspaces } from './routes/workspaces/list-workspaces.js';
import { registerTransferOwnership } from './routes/workspaces/transfer-ownership.js';

/** Every API route, in the order the OpenAPI document lists them. */
export const apiRoutes: RegisterRoute[] = [
  registerSignIn,
  registerSignOut,
  registerGetSession,
  registerChangePassword,
  registerListSessions,
  registerEndSession,
  registerSignOutEverywhere,
  registerGetSetup,
  registerCompleteSetup,
  registerListWorkspaces,
  registerCreateWorkspace,
  registerTransferOwnership,
  registerListMembers,
  registerUpdateMember,
  registerRemoveMember,
  registerCreateInvite,
  registerListInvites,
  registerRevokeInvite,
  registerPreviewInvite,
  registerAcceptInvite,
  registerListAuditLog,
  registerGetMe,
  registerListKeys,
  registerCreateKey,
  registerGetKey,
  registerRotateKey,
  registerRevokeKey,
  registerListServiceAccounts,
  registerCreateServiceAccount,
  registerUpdateServiceAccount,
  registerDeleteServiceAccount,
  registerListCollections,
  registerCreateCollection,
  registerGetCollection,
  registerUpdateCollection,
  registerDeleteCollection,
  registerRestoreCollection,
  registerGetSubmissionCounts,
  registerListRecords,
  registerAggregateRecords,
  registerCreateRecord,
  registerGetRecord,
  registerMergeRecord,
  registerReplaceRecord,
  registerDeleteRecord,
  registerRestoreRecord,
  registerListRecordVersions,
  registerGetRecordVersion,
  registerRestoreRecordVersion,
  registerRevertActor,
  registerImportRecords,
  registerExportRecords,
  registerBulkUpdateRecords,
  registerBulkDeleteRecords,
  registerListIndexes,
  registerCreateIndex,
  registerDeleteIndex,
  registerListSchemaVersions,
  registerCreateSchemaVersion,
  registerGetSchemaVersion,
  registerCheckSchemaVersion,
  registerActivateSchemaVersion,
  registerDeactivateSchemaVersion,
  registerUploadFile,
  registerGetFile,
  registerListFiles,
  registerDownloadFile,
  registerDeleteFile,
  registerAttachFile,
  registerDetachFile,
  registerListWebhooks,
  registerCreateWebhook,
  registerGetWebhook,
  registerUpdateWebhook,
  registerDeleteWebhook,
  registerEnableWebhook,
  registerDisableWebhook,
  registerRotateWebhookSecret,
  registerPingWebhook,
  registerListDeliveries,
  registerGetDelivery,
  registerReplayDelivery,
  registerWebhookHealth,
  registerRetryFailedDeliveries,
  registerListEvents,
  registerStreamEvents,
  registerListBackups,
  registerStartBackup,
  registerDownloadBackup,
];
