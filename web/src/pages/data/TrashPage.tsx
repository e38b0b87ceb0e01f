import { useState } from 'react';
import { api, withCursor, type Page } from '../../api.js';
import { Link, useTitle } from '../../router.js';
import { useSession } from '../../session.js';
import { ConfirmDialog } from '../../ui/ConfirmDialog.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { ACTIONS_COLUMN, DataTable } from '../../ui/DataTable.js';
import { Time } from '../../ui/Time.js';
import { usePagedQuery } from '../../query/usePagedQuery.js';
import type { Collection } from '../../api-types.js';
import { collectionPath } from './collection-paths.js';
import { formatBytes } from '../../ui/format-bytes.js';
import './data.css';

interface Contents {
  records: number;
  trashedRecords: number;
  files: number;
  fileBytes: number;
}

/** `/trash`: collections in the trash; restore, or delete for good after saying what goes with it. */
export function TrashPage() {
  useTitle('Trash');
  const session = useSession();
  const trash = usePagedQuery<Collection>(['/v1/collections', 'trashed'], (cursor, signal) =>
    api<Page<Collection>>('GET', withCursor('/v1/collections?trashed=true&sort=-createdAt&limit=100', cursor), undefined, signal),
  );
  const [purging, setPurging] = useState<{ collection: Collection; contents: Contents } | null>(null);
  const [error, setError] = useState<unknown>(null);
  /** A restore or a count of what would be lost is under way: the row buttons wait for it. */
  const [working, setWorking] = useState(false);
  const [notice, setNotice] = useState('');
  const canDelete = session.can('collections:delete');

  async function restore(collection: Collection) {
    setError(null);
    setWorking(true);
    try {
      await api('POST', `${collectionPath(collection.id)}/restore`);
      setNotice(`${collection.name} is back.`);
      await trash.reload();
    } catch (caught) {
      setError(caught);
    } finally {
      setWorking(false);
    }
  }

  /** Counts what would be lost first, so the question can name it. */
  async function askPurge(collection: Collection) {
    setError(null);
    setWorking(true);
    try {
      const counted = await api<Collection & { contents: Contents }>('GET', `${collectionPath(collection.id)}?contents=true`);
      setPurging({ collection, contents: counted.contents });
    } catch (caught) {
      setError(caught);
    } finally {
      setWorking(false);
    }
  }

  async function purge(collection: Collection) {
    await api('DELETE', `${collectionPath(collection.id)}?permanent=true`);
    setPurging(null);
    setNotice(`${collection.name} is deleted for good.`);
    await trash.reload();
  }

  return (
    <div className="stack">
      <header className="page-header">
        <p className="breadcrumb"><Link to="/">Collections</Link> / <span>Trash</span></p>
        <h1>Trash</h1>
      </header>
      <p className="hint">Collections in the trash keep their records, schema versions and files; their records cannot be read or written until restored. Their names stay taken.</p>
      {notice ? <p role="status" className="notice">{notice}</p> : null}
      <ErrorText error={error} />
      <ErrorText error={trash.error} />
      {trash.items.length === 0 && !trash.loading && !trash.error ? <p className="empty">The trash is empty.</p> : null}
      {trash.items.length > 0 ? (
        <DataTable<Collection>
          caption="Collections in the trash"
          rows={trash.items}
          rowKey={(collection) => collection.id}
          columns={[
            { id: 'name', label: 'Name', fixed: true, cell: (collection) => collection.name, title: (collection) => collection.name },
            { id: 'description', label: 'Description', cell: (collection) => collection.settings.description, title: (collection) => collection.settings.description ?? undefined },
            { id: 'trashedAt', label: 'Moved to the trash', cell: (collection) => (collection.trashedAt ? <Time value={collection.trashedAt} /> : null) },
            {
              ...ACTIONS_COLUMN,
                            cell: (collection) =>
                canDelete ? (
                  <>
                    <button type="button" onClick={() => void restore(collection)} disabled={working} aria-label={`Restore ${collection.name}`}>
                      Restore
                    </button>{' '}
                    <button type="button" className="quiet-danger" onClick={() => void askPurge(collection)} disabled={working} aria-label={`Delete for good: ${collection.name}`}>
                      Delete for good
                    </button>
                  </>
                ) : null,
            },
          ]}
          pager={{ hasMore: trash.hasMore, loading: trash.loading, onMore: () => void trash.more() }}
        />
      ) : null}
      <ConfirmDialog
        open={purging !== null}
        title={`Delete ${purging?.collection.name ?? ''} for good?`}
        message={purging ? lossSentence(purging.collection, purging.contents) : ''}
        confirmLabel="Delete for good"
        danger
        onConfirm={() => (purging ? purge(purging.collection) : undefined)}
        onCancel={() => setPurging(null)}
      />
    </div>
  );
}

function plural(count: number, one: string, many: string): string {
  return `${count.toLocaleString()} ${count === 1 ? one : many}`;
}

/** Names what a delete for good destroys; it cannot be undone. */
function lossSentence(collection: Collection, contents: Contents): string {
  const parts = [
    plural(contents.records, 'record', 'records'),
    ...(contents.trashedRecords ? [plural(contents.trashedRecords, 'record in its own trash', 'records in its own trash')] : []),
    `${plural(contents.files, 'file', 'files')}${contents.files ? ` (${formatBytes(contents.fileBytes)})` : ''}`,
    'all its schema versions and indexes',
  ];
  return `This deletes ${collection.name} for good, with ${parts.join(', ')}. It cannot be undone, and the name ${collection.name} becomes free for a new, different collection.`;
}
