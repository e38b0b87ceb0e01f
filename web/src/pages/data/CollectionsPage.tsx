import { useState } from 'react';
import { api, withCursor, type Page } from '../../api.js';
import { Link, navigate, useTitle } from '../../router.js';
import { useSession } from '../../session.js';
import { ConfirmDialog } from '../../ui/ConfirmDialog.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { ACTIONS_COLUMN, DataTable } from '../../ui/DataTable.js';
import { Time } from '../../ui/Time.js';
import { usePagedQuery } from '../../query/usePagedQuery.js';
import { CreateCollectionForm } from './CreateCollectionForm.js';
import type { Collection, ListedCollection } from '../../api-types.js';
import { collectionPath, pagePath } from './collection-paths.js';
import './data.css';

/** `/`: the workspace's collections; create one, open one, move one to the trash. */
export function CollectionsPage() {
  useTitle('Collections');
  const session = useSession();
  const collections = usePagedQuery<ListedCollection>(['/v1/collections', 'paged'], (cursor, signal) =>
    api<Page<ListedCollection>>('GET', withCursor('/v1/collections?sort=-createdAt&limit=100&counts=true', cursor), undefined, signal),
  );
  const [trashing, setTrashing] = useState<Collection | null>(null);
  const [notice, setNotice] = useState('');

  /** Throws on failure, so the dialog stays open and says why. */
  async function moveToTrash(collection: Collection) {
    await api('DELETE', collectionPath(collection.id));
    setTrashing(null);
    setNotice(`${collection.name} is in the trash. Restore it from the Trash page.`);
    await collections.reload();
  }

  return (
    <div className="stack">
      <header className="page-header">
        <h1>Collections</h1>
        <Link to="/trash">Trash</Link>
      </header>
      {notice ? <p role="status" className="notice">{notice}</p> : null}
      <ErrorText error={collections.error} />
      {collections.items.length === 0 && !collections.loading && !collections.error ? (
        <p className="empty">No collections yet.{session.can('collections:create') ? ' Create the first one below.' : ''}</p>
      ) : null}
      {collections.items.length > 0 ? (
        <DataTable<ListedCollection>
          caption={`Collections of ${session.workspace.name}`}
          rows={collections.items}
          rowKey={(collection) => collection.id}
          columns={[
            { id: 'name', label: 'Name', fixed: true, cell: (collection) => <Link to={pagePath(collection.name, 'records')}>{collection.name}</Link>, title: (collection) => collection.name },
            { id: 'records', label: 'Records', className: 'number', cell: recordCount },
            { id: 'description', label: 'Description', cell: (collection) => collection.settings.description, title: (collection) => collection.settings.description ?? undefined },
            { id: 'access', label: 'Access', cell: (collection) => (collection.public ? <span className="badge">public</span> : 'private') },
            { id: 'schema', label: 'Schema', cell: (collection) => (collection.activeSchemaVersion === null ? 'none' : `version ${collection.activeSchemaVersion}`) },
            { id: 'createdAt', label: 'Created', cell: (collection) => <Time value={collection.createdAt} /> },
            {
              ...ACTIONS_COLUMN,
                            cell: (collection) => (
                <>
                  <Link to={pagePath(collection.name)}>Settings</Link>{' '}
                  {session.can('collections:delete') ? (
                    <button type="button" className="quiet-danger" onClick={() => setTrashing(collection)} aria-label={`Move to trash: ${collection.name}`}>
                      Move to trash
                    </button>
                  ) : null}
                </>
              ),
            },
          ]}
          pager={{ hasMore: collections.hasMore, loading: collections.loading, onMore: () => void collections.more() }}
        />
      ) : null}
      {session.can('collections:create') ? (
        <CreateCollectionForm
          // Straight to the new collection's records: the next thing to do is to put some in.
          onCreated={(collection) => navigate(pagePath(collection.name, 'records'))}
        />
      ) : null}
      <ConfirmDialog
        open={trashing !== null}
        title={`Move ${trashing?.name ?? ''} to the trash?`}
        message={`Its records, schema versions and files are kept, but cannot be read or written until you restore it from the Trash. Programs using it will get 404.`}
        confirmLabel="Move to trash"
        danger
        onConfirm={() => (trashing ? moveToTrash(trashing) : undefined)}
        onCancel={() => setTrashing(null)}
      />
    </div>
  );
}

/** "1,234", or "10,000+" past the count's cap (docs/data-api.md). */
function recordCount(collection: ListedCollection): string {
  if (collection.recordCount === undefined) return '';
  const count = collection.recordCount.toLocaleString('en');
  return collection.recordCountCapped ? `${count}+` : count;
}
