import { useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { api } from '../../api.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { Time } from '../../ui/Time.js';
import { formatBytes } from '../../ui/format-bytes.js';
import { useClearOfTopbar } from '../../ui/useClearOfTopbar.js';
import { useApiQuery } from '../../query/useApiQuery.js';
import type { RecordItem, RecordVersion as Version, StoredFile } from '../../api-types.js';
import { collectionPath } from './collection-paths.js';
import { downloadFromApi } from './download.js';
import { useRecordHistory, VERSIONS_SHOWN } from './record-history-query.js';

const CHANGE_WORDS: Record<Version['change'], string> = {
  created: 'created',
  updated: 'changed',
  replaced: 'replaced',
  trashed: 'moved to the trash',
  restored: 'restored from the trash',
  reverted: 'put back to an older version',
};

/**
 * The record opened from its row, beside the table: its fields in full, its files and its
 * history (the versions kept, newest first), with what may be done to it. Escape or Close shuts
 * it, and the keyboard goes back where it was. It stays below the top bar, whose controls remain
 * usable while it is open. The history follows changes made elsewhere: the page marks it stale
 * when the event stream tells of one (useRecordHistoryInvalidation).
 */
export function RecordPanel(props: {
  collection: string;
  record: RecordItem;
  /** The buttons for what may be done to the record (edit, trash; restore in the trash). */
  actions: ReactNode;
  /** The record's editor, when it is being edited: shown instead of its fields. */
  editor?: ReactNode;
  onClose: () => void;
}) {
  const titleId = useId();
  const panel = useRef<HTMLElement>(null);
  const { record } = props;
  const onClose = useRef(props.onClose);
  onClose.current = props.onClose;
  useClearOfTopbar(panel);

  useEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    panel.current?.focus();
    const onKey = (event: KeyboardEvent) => {
      const target = event.target as HTMLElement;
      // Escape in a field or a dialog is theirs (a cancel).
      if (event.key !== 'Escape' || event.defaultPrevented || target.closest('dialog, input, textarea, select')) return;
      onClose.current();
    };
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('keydown', onKey);
      if (before?.isConnected) before.focus();
    };
  }, []);

  return (
    <aside className="record-panel stack" aria-labelledby={titleId} ref={panel} tabIndex={-1}>
      <div className="record-panel-head">
        <h2 id={titleId}>Record {record.id}</h2>
        <button type="button" onClick={props.onClose} aria-label="Close the record">
          Close
        </button>
      </div>
      <p className="hint">
        Created <Time value={record.createdAt} />, changed <Time value={record.updatedAt} />
        {record.trashedAt ? <>, in the trash since <Time value={record.trashedAt} /></> : null}.
      </p>
      {props.actions ? <div className="actions">{props.actions}</div> : null}
      {props.editor ?? <RecordFields record={record} />}
      <RecordFiles collection={props.collection} fileIds={record.files} />
      <RecordHistory collection={props.collection} record={record} />
    </aside>
  );
}

function RecordFields(props: { record: RecordItem }) {
  const entries = Object.entries(props.record.data);
  return (
    <section aria-label="Fields">
      <h3>Fields</h3>
      {entries.length === 0 ? <p className="empty">No fields.</p> : null}
      <dl className="record-fields">
        {entries.map(([key, value]) => (
          <div key={key}>
            <dt>{key}</dt>
            <dd>{typeof value === 'string' ? value : <code>{JSON.stringify(value, null, 2)}</code>}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}

function RecordFiles(props: { collection: string; fileIds: string[] }) {
  return (
    <section aria-label="Files">
      <h3>Files</h3>
      {props.fileIds.length === 0 ? <p className="empty">No files attached.</p> : null}
      <ul className="record-files">
        {props.fileIds.map((id) => (
          <FileLine key={id} collection={props.collection} fileId={id} />
        ))}
      </ul>
    </section>
  );
}

function FileLine(props: { collection: string; fileId: string }) {
  const path = collectionPath(props.collection, 'files', props.fileId);
  const file = useApiQuery([path], (signal) => api<StoredFile>('GET', path, undefined, signal));
  const [error, setError] = useState<unknown>(null);
  const name = file.data?.name ?? props.fileId;
  return (
    <li>
      {name}
      {file.data ? <span className="muted"> ({formatBytes(file.data.size)})</span> : null}{' '}
      <button
        type="button"
        onClick={() => {
          setError(null);
          downloadFromApi(`${path}/content`, name).catch(setError);
        }}
        aria-label={`Download ${name}`}
      >
        Download
      </button>
      <ErrorText error={file.error ?? error} />
    </li>
  );
}

function RecordHistory(props: { collection: string; record: RecordItem }) {
  const versions = useRecordHistory(props.collection, props.record.id);
  const shown = versions.data?.data ?? [];
  return (
    <section aria-label="History">
      <h3>History</h3>
      <ErrorText error={versions.error} />
      {versions.loading && !versions.data ? <p className="muted">Loading…</p> : null}
      <ol className="record-history">
        {shown.map((version) => (
          <li key={version.revision}>
            <details>
              <summary>
                Revision {version.revision}: {CHANGE_WORDS[version.change]} <Time value={version.changedAt} />
                {version.changedBy.name ? ` by ${version.changedBy.name}` : ''}
              </summary>
              <pre>{JSON.stringify(version.data, null, 2)}</pre>
            </details>
          </li>
        ))}
      </ol>
      {versions.data?.nextCursor ? <p className="hint">The newest {VERSIONS_SHOWN} versions; older ones are in the API (…/versions).</p> : null}
    </section>
  );
}
