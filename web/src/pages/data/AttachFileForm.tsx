import { useId, useState } from 'react';
import { api, withCursor, type Page } from '../../api.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { Field } from '../../ui/Field.js';
import { Form, useForm } from '../../ui/Form.js';
import { Pager } from '../../ui/Pager.js';
import { Time } from '../../ui/Time.js';
import { usePagedQuery } from '../../query/usePagedQuery.js';
import type { RecordItem, StoredFile } from '../../api-types.js';
import { collectionPath } from './collection-paths.js';
import { recordFieldsSummary } from './record-summary.js';

const RECORD_ID = /^rec_[0-9a-z]{26}$/;
/** How many records the picker shows at once: enough to scan, few enough to stay on screen. */
const SHOWN = 20;

/**
 * Attaches a file to one record of the same collection, picked from a list of its records (newest
 * first, "Load more" for older ones) that the search box narrows by any text of the record or its
 * id. A record id pasted whole can be used even when that record is not loaded yet.
 */
export function AttachFileForm(props: { collection: string; file: StoredFile; onAttached: (record: RecordItem) => void; onCancel: () => void }) {
  const id = useId();
  const [search, setSearch] = useState('');
  const [recordId, setRecordId] = useState('');
  const recordsPath = collectionPath(props.collection, 'records');
  const records = usePagedQuery<RecordItem>([recordsPath, 'newest', 'picker'], (cursor, signal) =>
    api<Page<RecordItem>>('GET', withCursor(`${recordsPath}?sort=-createdAt&limit=100`, cursor), undefined, signal),
  );

  const needle = search.trim().toLowerCase();
  const matching = needle === '' ? records.items : records.items.filter((record) => `${record.id} ${recordFieldsSummary(record, Infinity)}`.toLowerCase().includes(needle));
  const shown = matching.slice(0, SHOWN);
  const pastedId = RECORD_ID.test(search.trim()) && !records.items.some((record) => record.id === search.trim()) ? search.trim() : null;

  const form = useForm(async () => {
    const record = await api<RecordItem>('POST', collectionPath(props.collection, 'records', recordId, 'files'), { fileId: props.file.id });
    props.onAttached(record);
  });

  return (
    <Form
      form={form}
      title={`Attach ${props.file.name} to a record`}
      titleId={`${id}-title`}
      submitLabel="Attach"
      busyLabel="Attaching…"
      disabled={recordId === ''}
      onCancel={props.onCancel}
    >
      <Field label="Find a record" hint="Any text of the record, or its id. Newest records first.">
        <input type="search" value={search} onChange={(event) => setSearch(event.target.value)} spellCheck={false} autoComplete="off" />
      </Field>
      <fieldset className="record-picker">
        <legend>Record</legend>
        {shown.map((record) => (
          <label key={record.id} className="record-choice">
            <input type="radio" name={`${id}-record`} value={record.id} checked={recordId === record.id} onChange={() => setRecordId(record.id)} />
            <span className="record-choice-text">{recordFieldsSummary(record, 100)}</span>
            <span className="muted">
              <code>{record.id}</code> · <Time value={record.createdAt} compact />
            </span>
          </label>
        ))}
        {pastedId ? (
          <label className="record-choice">
            <input type="radio" name={`${id}-record`} value={pastedId} checked={recordId === pastedId} onChange={() => setRecordId(pastedId)} />
            <span className="record-choice-text">
              The record with id <code>{pastedId}</code>
            </span>
          </label>
        ) : null}
        {records.loading && records.items.length === 0 ? <p className="muted">Loading records…</p> : null}
        {!records.loading && shown.length === 0 && !pastedId ? (
          <p className="empty">{needle ? `No loaded record contains “${search.trim()}”.` : 'This collection has no records yet.'}</p>
        ) : null}
        {matching.length > SHOWN ? <p className="muted">{matching.length - SHOWN} more match: narrow the search.</p> : null}
        <Pager hasMore={records.hasMore} onMore={() => void records.more()} loading={records.loading} />
      </fieldset>
      <ErrorText error={records.error} />
    </Form>
  );
}
