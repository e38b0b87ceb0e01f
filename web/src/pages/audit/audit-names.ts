import { loadAll } from '../../api.js';
import type { ApiKey, Collection, Member, ServiceAccount, Webhook } from '../../api-types.js';
import { useApiQuery } from '../../query/useApiQuery.js';

/**
 * Names for the ids an audit entry holds (people, collections, keys, service accounts, webhooks),
 * from the lists the page's reader (an owner or admin) may read anyway. Something deleted since is
 * not in them: its id shows alone. Until the lists arrive, ids show alone too.
 */
export function useAuditNames(): ReadonlyMap<string, string> {
  return (
    useApiQuery(['/v1/audit-log', 'names'], async (signal) => {
      const [members, live, trashed, keys, accounts, webhooks] = await Promise.all([
        loadAll<Member>('/v1/members', signal),
        loadAll<Collection>('/v1/collections', signal),
        loadAll<Collection>('/v1/collections?trashed=true', signal),
        loadAll<ApiKey>('/v1/keys', signal),
        loadAll<ServiceAccount>('/v1/service-accounts', signal),
        loadAll<Webhook>('/v1/webhooks', signal),
      ]);
      return new Map<string, string>([
        ...members.map((member) => [member.personId, `${member.name} (${member.email})`] as const),
        ...[...live, ...trashed].map((collection) => [collection.id, collection.name] as const),
        ...keys.map((key) => [key.id, key.name] as const),
        ...accounts.map((account) => [account.id, account.name] as const),
        ...webhooks.map((webhook) => [webhook.id, webhook.url] as const),
      ]);
    }).data ?? new Map()
  );
}
