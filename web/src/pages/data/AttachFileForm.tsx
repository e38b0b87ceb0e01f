import { useId, useState, type FormEvent } from 'react';
import { api, fieldError, type Page } from '../../api.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { Field } from '../../ui/Field.js';
import { FormActions } from '../../ui/FormActions.js';
import { useApiQuery } from '../../query/useApiQuery.js';
import type { RecordItem, StoredFile } from '../../api-types.js';
import { collectionPath } from './collection-paths.js';
import { recordSummary } from './record-summary.js';

/** Attaches a file to one record of the same collection, chosen by id (the newest records are offered). */
export function AttachFileForm(props: { collection: string; file: StoredFile; onAttached: (record: RecordItem) => void; onCancel: () => void }) {
  const id = useId();
  const [recordId, setRecordId] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const recentPath = `${collectionPath(props.collection, 'records')}?limit=100&sort=-createdAt`;
  const recent = useApiQuery([recentPath], (signal) => api<Page<RecordItem>>('GET', recentPath, undefined, signal));

  async function submit(event: FormEvent) {
    event.preventDefault();
    setError(null);
    setBusy(true);
    try {
      const record = await api<RecordItem>('POST', collectionPath(props.collection, 'records', recordId.trim(), 'files'), { fileId: props.file.id });
      props.onAttached(record);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="panel stack" onSubmit={submit} aria-label={`Attach ${props.file.name} to a record`}>
      <h2>Attach {props.file.name} to a record</h2>
      <Field label="Record id" error={fieldError(error, 'rec')} hint="Type or pick a record of this collection (newest first).">
        <input value={recordId} onChange={(event) => setRecordId(event.target.value)} list={`${id}-records`} placeholder="rec_…" spellCheck={false} autoComplete="off" required />
      </Field>
      <datalist id={`${id}-records`}>
        {(recent.data?.data ?? []).map((record) => (
          <option key={record.id} value={record.id}>
            {recordSummary(record, 60)}
          </option>
        ))}
      </datalist>
      <ErrorText error={error} />
      <FormActions label="Attach" busyLabel="Attaching…" busy={busy} disabled={recordId.trim() === ''} onCancel={props.onCancel} />
    </form>
  );
}
