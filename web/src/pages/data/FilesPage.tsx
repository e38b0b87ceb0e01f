import { useState } from 'react';
import { api, withCursor, type Page } from '../../api.js';
import { useRoute, useTitle } from '../../router.js';
import { useSession } from '../../session.js';
import { ConfirmDialog } from '../../ui/ConfirmDialog.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { ACTIONS_COLUMN, DataTable } from '../../ui/DataTable.js';
import { Time } from '../../ui/Time.js';
import { usePagedQuery } from '../../query/usePagedQuery.js';
import { AttachFileForm } from './AttachFileForm.js';
import { CollectionTabs } from './CollectionTabs.js';
import { downloadFromApi } from './download.js';
import { FileUpload } from './FileUpload.js';
import type { StoredFile } from '../../api-types.js';
import { collectionPath } from './collection-paths.js';
import { formatBytes } from '../../ui/format-bytes.js';
import './data.css';

/** `/collections/:name/files`: upload with progress, list, download, attach to a record, delete. */
export function FilesPage() {
  const { params } = useRoute();
  const name = params.name ?? '';
  useTitle(`${name}: files`);
  const session = useSession();
  const files = usePagedQuery<StoredFile>([collectionPath(name, 'files')], (cursor, signal) =>
    api<Page<StoredFile>>('GET', withCursor(`${collectionPath(name, 'files')}?sort=-createdAt&limit=100`, cursor), undefined, signal),
  );
  const [attaching, setAttaching] = useState<StoredFile | null>(null);
  const [deleting, setDeleting] = useState<StoredFile | null>(null);
  const [downloading, setDownloading] = useState<{ id: string; received: number; total: number | null } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState('');
  const canWrite = session.can('files:write');

  async function download(file: StoredFile) {
    setError(null);
    setDownloading({ id: file.id, received: 0, total: file.size });
    try {
      await downloadFromApi(collectionPath(name, 'files', file.id, 'content'), file.name, (received, total) =>
        setDownloading({ id: file.id, received, total: total ?? file.size }),
      );
    } catch (caught) {
      setError(caught);
    } finally {
      setDownloading(null);
    }
  }

  async function remove(file: StoredFile) {
    await api('DELETE', collectionPath(name, 'files', file.id));
    setDeleting(null);
    setNotice(`${file.name} is deleted.`);
    await files.reload();
  }

  return (
    <div className="stack">
      <CollectionTabs name={name} title={`${name}: files`} />
      {notice ? <p role="status" className="notice">{notice}</p> : null}
      <ErrorText error={error} />
      <ErrorText error={files.error} />
      {canWrite ? (
        <FileUpload
          collection={name}
          onUploaded={(file) => {
            setNotice(`Uploaded ${file.name} (${formatBytes(file.size)}).`);
            void files.reload();
          }}
        />
      ) : null}
      {attaching ? (
        <AttachFileForm
          key={attaching.id}
          collection={name}
          file={attaching}
          onCancel={() => setAttaching(null)}
          onAttached={(record) => {
            setNotice(`${attaching.name} is attached to record ${record.id}.`);
            setAttaching(null);
            void files.reload();
          }}
        />
      ) : null}
      {downloading ? (
        <p role="status" className="progress">
          <progress aria-label="Download" max={downloading.total ?? undefined} value={downloading.total ? downloading.received : undefined} /> {formatBytes(downloading.received)}
          {downloading.total ? ` of ${formatBytes(downloading.total)}` : ''} received
        </p>
      ) : null}
      {!files.loading && !files.error && files.items.length === 0 ? <p className="empty">No files yet.</p> : null}
      {files.items.length > 0 ? (
        <DataTable<StoredFile>
          caption={`Files of ${name}`}
          rows={files.items}
          rowKey={(file) => file.id}
          columns={[
            {
              id: 'name',
              label: 'Name',
              fixed: true,
              cell: (file) => (
                <>
                  {file.name}
                  <br />
                  <code className="muted">{file.id}</code>
                </>
              ),
              title: (file) => `${file.name} (${file.id})`,
            },
            { id: 'size', label: 'Size', cell: (file) => formatBytes(file.size) },
            { id: 'type', label: 'Type', cell: (file) => <code>{file.contentType}</code>, title: (file) => file.contentType },
            { id: 'attachedTo', label: 'Attached to', cell: (file) => (file.attachedTo === undefined ? '' : `${file.attachedTo} ${file.attachedTo === 1 ? 'record' : 'records'}`) },
            { id: 'createdAt', label: 'Uploaded', cell: (file) => <Time value={file.createdAt} /> },
            {
              ...ACTIONS_COLUMN,
                            cell: (file) => (
                <>
                  <button type="button" onClick={() => void download(file)} disabled={downloading !== null} aria-label={`Download ${file.name}`}>
                    Download
                  </button>
                  {canWrite ? (
                    <>
                      {' '}
                      <button type="button" onClick={() => setAttaching(file)} aria-label={`Attach ${file.name} to a record`}>
                        Attach…
                      </button>{' '}
                      <button type="button" className="quiet-danger" onClick={() => setDeleting(file)} aria-label={`Delete ${file.name}`}>
                        Delete
                      </button>
                    </>
                  ) : null}
                </>
              ),
            },
          ]}
          pager={{ hasMore: files.hasMore, loading: files.loading, onMore: () => void files.more() }}
        />
      ) : null}
      <ConfirmDialog
        open={deleting !== null}
        title={`Delete ${deleting?.name ?? ''}?`}
        message={deleting ? deleteMessage(deleting) : ''}
        confirmLabel="Delete file"
        danger
        onConfirm={() => (deleting ? remove(deleting) : undefined)}
        onCancel={() => setDeleting(null)}
      />
    </div>
  );
}

function deleteMessage(file: StoredFile): string {
  const attached = file.attachedTo ? ` It is detached from the ${file.attachedTo === 1 ? 'record' : `${file.attachedTo} records`} it is attached to.` : '';
  return `${file.name} (${formatBytes(file.size)}) is deleted for good, content included.${attached} This cannot be undone.`;
}
