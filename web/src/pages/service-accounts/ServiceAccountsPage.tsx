import '../keys/keys-and-webhooks.css';
import { useState } from 'react';
import { roleAllows, type Ability } from '../../../../src/abilities.js';
import { api, loadAll } from '../../api.js';
import { Link, useTitle } from '../../router.js';
import { useSession } from '../../session.js';
import { ConfirmDialog } from '../../ui/ConfirmDialog.js';
import { ACTIONS_COLUMN, DataTable } from '../../ui/DataTable.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { Time } from '../../ui/Time.js';
import { useApiQuery } from '../../query/useApiQuery.js';
import { CreateKeyForm } from '../keys/CreateKeyForm.js';
import type { ApiKey, CollectionRef, ServiceAccount } from '../../api-types.js';
import { RevealedSecret } from '../keys/RevealedSecret.js';
import { CreateServiceAccountForm } from './CreateServiceAccountForm.js';
import { ServiceAccountRole } from './ServiceAccountRole.js';
import { newestFirst } from '../../ui/newest-first.js';

interface Loaded {
  accounts: ServiceAccount[];
  keys: ApiKey[];
  collections: CollectionRef[];
}

/** Service accounts (machine users with a role): create, change role, issue keys, delete. Owners and admins only. */
export function ServiceAccountsPage(): React.JSX.Element {
  useTitle('Service accounts');
  const session = useSession();
  const loaded = useApiQuery<Loaded>(['/v1/service-accounts', 'with keys and collections'], async (signal) => {
    const [accounts, keys, collections] = await Promise.all([
      loadAll<ServiceAccount>('/v1/service-accounts', signal).then((accounts) => newestFirst(accounts, (account) => account.createdAt)),
      loadAll<ApiKey>('/v1/keys', signal),
      loadAll<CollectionRef>('/v1/collections', signal),
    ]);
    return { accounts, keys, collections };
  });

  const [creating, setCreating] = useState(false);
  const [issuingFor, setIssuingFor] = useState<ServiceAccount | null>(null);
  const [revealed, setRevealed] = useState<{ title: string; secret: string } | null>(null);
  const [deleting, setDeleting] = useState<ServiceAccount | null>(null);

  const accounts = loaded.data?.accounts ?? [];
  const activeKeysOf = (account: ServiceAccount) => loaded.data?.keys.filter((key) => key.serviceAccountId === account.id && key.state === 'active').length ?? 0;

  return (
    <section>
      <div className="page-head">
        <h1>Service accounts</h1>
        {!creating ? (
          <button type="button" className="primary" onClick={() => setCreating(true)}>
            Create service account
          </button>
        ) : null}
      </div>
      <p className="lead">
        A service account is a machine user for an integration. Its keys answer to its role, not to a person, so they keep working when people leave. Its
        keys are listed under <Link to="/keys">API keys</Link>.
      </p>

      {creating ? (
        <CreateServiceAccountForm
          onCreated={() => {
            setCreating(false);
            void loaded.reload();
          }}
          onCancel={() => setCreating(false)}
        />
      ) : null}

      {revealed ? <RevealedSecret title={revealed.title} label="Secret key" secret={revealed.secret} onDone={() => setRevealed(null)} /> : null}

      {issuingFor ? (
        <CreateKeyForm
          key={issuingFor.id}
          serviceAccount={issuingFor}
          grantable={(scope) => session.can(scope) && roleAllows(issuingFor.role, scope as Ability)}
          collections={loaded.data?.collections ?? []}
          onCreated={(key) => {
            setIssuingFor(null);
            setRevealed({ title: `Key “${key.name}” for ${issuingFor.name} created`, secret: key.secret });
            void loaded.reload();
          }}
          onCancel={() => setIssuingFor(null)}
        />
      ) : null}

      <ErrorText error={loaded.error} />
      {loaded.loading && !loaded.data ? <p role="status">Loading service accounts…</p> : null}
      {loaded.data && accounts.length === 0 ? <p className="empty">No service accounts yet.</p> : null}
      {accounts.length > 0 ? (
        <DataTable<ServiceAccount>
          caption="Service accounts"
          rows={accounts}
          rowKey={(account) => account.id}
          columns={[
            { id: 'name', label: 'Name', fixed: true, cell: (account) => account.name, title: (account) => account.name },
            {
              id: 'role',
              label: 'Role',
              // A picker, a button and what saving said: never cut short.
              className: 'actions-cell',
              cell: (account) => <ServiceAccountRole account={account} onChanged={() => void loaded.reload()} />,
            },
            { id: 'activeKeys', label: 'Active keys', cell: (account) => activeKeysOf(account) },
            { id: 'createdAt', label: 'Created', cell: (account) => <Time value={account.createdAt} /> },
            {
              ...ACTIONS_COLUMN,
                            cell: (account) => (
                <>
                  <button
                    type="button"
                    onClick={() => {
                      setRevealed(null);
                      setIssuingFor(account);
                    }}
                    aria-label={`Issue key for ${account.name}`}
                  >
                    Issue key
                  </button>{' '}
                  <button type="button" className="quiet-danger" onClick={() => setDeleting(account)} aria-label={`Delete ${account.name}`}>
                    Delete
                  </button>
                </>
              ),
            },
          ]}
        />
      ) : null}

      <ConfirmDialog
        open={deleting !== null}
        title={deleting ? `Delete the service account “${deleting.name}”?` : 'Delete service account?'}
        danger
        confirmLabel="Delete service account"
        message={
          deleting ? (
            <p>
              {activeKeysOf(deleting) === 0
                ? 'It has no active keys.'
                : `Its ${activeKeysOf(deleting)} active key${activeKeysOf(deleting) === 1 ? '' : 's'} stop${activeKeysOf(deleting) === 1 ? 's' : ''} working at once.`}{' '}
              This cannot be undone.
            </p>
          ) : null
        }
        onConfirm={async () => {
          if (!deleting) return;
          await api('DELETE', `/v1/service-accounts/${deleting.id}`);
          if (issuingFor?.id === deleting.id) setIssuingFor(null);
          setDeleting(null);
          await loaded.reload();
        }}
        onCancel={() => setDeleting(null)}
      />
    </section>
  );
}
