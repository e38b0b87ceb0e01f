import './keys-and-webhooks.css';
import { useState } from 'react';
import { ROLE_RANK } from '../../../../src/abilities.js';
import { api, loadAll, withCursor, type Page } from '../../api.js';
import { useTitle } from '../../router.js';
import { useSession } from '../../session.js';
import { ConfirmDialog } from '../../ui/ConfirmDialog.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { useApiQuery } from '../../query/useApiQuery.js';
import { usePagedQuery } from '../../query/usePagedQuery.js';
import type { Member } from '../../api-types.js';
import { CreateKeyForm } from './CreateKeyForm.js';
import type { ApiKey, ApiKeyWithSecret, CollectionRef, ServiceAccount } from '../../api-types.js';
import { KeyTable } from './KeyTable.js';
import { RevealedSecret } from './RevealedSecret.js';
import { RotateKeyDialog } from './RotateKeyDialog.js';
import { UndoKeyDialog } from './UndoKeyDialog.js';

/** The names behind the ids a key carries: its collections, its creator, its service account. */
interface Names {
  collections: CollectionRef[];
  members: Member[];
  accounts: ServiceAccount[];
}

/**
 * API keys: create (with only the scopes the person's role may grant), list, rotate, revoke, and
 * (owners and admins) undo what a key changed since a moment.
 * Owners and admins see every key of the workspace; everyone else their own (the API decides).
 */
export function KeysPage(): React.JSX.Element {
  useTitle('API keys');
  const session = useSession();
  const keys = usePagedQuery<ApiKey>(['/v1/keys', 'paged'], (cursor, signal) => api<Page<ApiKey>>('GET', withCursor('/v1/keys?sort=-createdAt&limit=50', cursor), undefined, signal));
  const names = useApiQuery<Names>(['names of collections, members and service accounts', session.workspace.role], async (signal) => {
    const [collections, members, accounts] = await Promise.all([
      loadAll<CollectionRef>('/v1/collections', signal),
      loadAll<Member>('/v1/members', signal),
      session.can('service-accounts:manage') ? loadAll<ServiceAccount>('/v1/service-accounts', signal) : Promise.resolve([]),
    ]);
    return { collections, members, accounts };
  });

  const [creating, setCreating] = useState(false);
  const [revealed, setRevealed] = useState<{ title: string; secret: string } | null>(null);
  const [rotating, setRotating] = useState<ApiKey | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const [undoing, setUndoing] = useState<ApiKey | null>(null);
  // Undoing what a caller did is for owners and admins: the API asks what deleting records for good asks.
  const mayUndo = session.can('records:purge');

  const collectionName = (id: string) => names.data?.collections.find((collection) => collection.id === id)?.name ?? id;
  const ownerOf = (key: ApiKey) => {
    if (key.serviceAccountId) {
      const account = names.data?.accounts.find((candidate) => candidate.id === key.serviceAccountId);
      return `Service account ${account ? account.name : key.serviceAccountId}`;
    }
    if (key.createdBy === session.person.id) return 'You';
    if (!names.data) return '…';
    const member = names.data?.members.find((candidate) => candidate.personId === key.createdBy);
    return member ? `${member.name} (${member.email})` : 'A former member';
  };

  // The API lets a person rotate only keys acting with a role no higher than theirs (docs/security.md); revoking any.
  const mayRotate = (key: ApiKey) => {
    const role = key.serviceAccountId
      ? names.data?.accounts.find((candidate) => candidate.id === key.serviceAccountId)?.role
      : names.data?.members.find((candidate) => candidate.personId === key.createdBy)?.role;
    return role === undefined || ROLE_RANK[role] <= ROLE_RANK[session.workspace.role];
  };

  const showSecret = (title: string, key: ApiKeyWithSecret) => {
    setRevealed({ title, secret: key.secret });
    void keys.reload();
  };

  return (
    <section>
      <div className="page-head">
        <h1>API keys</h1>
        {!creating && !revealed ? (
          <button type="button" className="primary" onClick={() => setCreating(true)}>
            Create key
          </button>
        ) : null}
      </div>
      <p className="lead">
        Programs call Plainbase with a key, sent as <code>Authorization: Bearer …</code>.{' '}
        {session.can('keys:manage') ? 'You see every key of this workspace.' : 'You see the keys you created.'}
      </p>

      {revealed ? (
        <RevealedSecret
          title={revealed.title}
          label="Secret key"
          secret={revealed.secret}
          usage={
            <p className="hint">
              Send it as <code>Authorization: Bearer {'<key>'}</code>. Try it with <code>GET /v1/me</code>, which says what the key may do.
            </p>
          }
          onDone={() => setRevealed(null)}
        />
      ) : null}

      {creating ? (
        <CreateKeyForm
          grantable={(scope) => session.can(scope)}
          collections={names.data?.collections ?? []}
          onCreated={(key) => {
            setCreating(false);
            showSecret(`Key “${key.name}” created`, key);
          }}
          onCancel={() => setCreating(false)}
        />
      ) : null}

      <ErrorText error={keys.error ?? names.error} />
      {keys.loading && keys.items.length === 0 ? <p role="status">Loading keys…</p> : null}
      {!keys.loading && !keys.error && keys.items.length === 0 ? <p className="empty">No keys yet. Create one for each program that calls the API.</p> : null}
      {keys.items.length > 0 ? (
        <KeyTable
          keys={keys.items}
          ownerOf={ownerOf}
          collectionName={collectionName}
          mayRotate={mayRotate}
          onRotate={setRotating}
          onRevoke={setRevoking}
          onUndo={mayUndo ? setUndoing : undefined}
          pager={{ hasMore: keys.hasMore, loading: keys.loading, onMore: () => void keys.more() }}
        />
      ) : null}

      {undoing ? <UndoKeyDialog key={undoing.id} apiKey={undoing} collectionName={collectionName} onClose={() => setUndoing(null)} /> : null}
      <RotateKeyDialog
        apiKey={rotating}
        onRotated={(key) => {
          setRotating(null);
          showSecret(`New secret for “${key.name}”`, key);
        }}
        onCancel={() => setRotating(null)}
      />
      <ConfirmDialog
        open={revoking !== null}
        title={revoking ? `Revoke the key “${revoking.name}”?` : 'Revoke key?'}
        danger
        confirmLabel="Revoke key"
        message={
          revoking ? (
            <p>
              Every program using <code>{revoking.preview}</code> is refused from its next request, including with a previous secret still in a grace period.
              Revoking cannot be undone; the key stays listed as revoked and its history stays in the audit log.
            </p>
          ) : null
        }
        onConfirm={async () => {
          if (!revoking) return;
          await api('POST', `/v1/keys/${revoking.id}/revoke`);
          setRevoking(null);
          await keys.reload();
        }}
        onCancel={() => setRevoking(null)}
      />
    </section>
  );
}
