import { useState } from 'react';
import { api, withCursor, type Page } from '../../api.js';
import { Link, navigate, useTitle } from '../../router.js';
import { useSession } from '../../session.js';
import { ConfirmDialog } from '../../ui/ConfirmDialog.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { Pager } from '../../ui/Pager.js';
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
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Collections of {session.workspace.name}</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Records</th>
                <th scope="col">Description</th>
                <th scope="col">Access</th>
                <th scope="col">Schema</th>
                <th scope="col">Created</th>
                <th scope="col"><span className="visually-hidden">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {collections.items.map((collection) => (
                <tr key={collection.id}>
                  <th scope="row">
                    <Link to={pagePath(collection.name, 'records')}>{collection.name}</Link>
                  </th>
                  <td className="number">{recordCount(collection)}</td>
                  <td>{collection.settings.description}</td>
                  <td>{collection.public ? <span className="badge">public</span> : 'private'}</td>
                  <td>{collection.activeSchemaVersion === null ? 'none' : `version ${collection.activeSchemaVersion}`}</td>
                  <td><Time value={collection.createdAt} /></td>
                  <td className="row-actions">
                    <Link to={pagePath(collection.name)}>Settings</Link>
                    {session.can('collections:delete') ? (
                      <button type="button" className="quiet-danger" onClick={() => setTrashing(collection)} aria-label={`Move to trash: ${collection.name}`}>
                        Move to trash
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <Pager hasMore={collections.hasMore} loading={collections.loading} onMore={() => void collections.more()} />
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
