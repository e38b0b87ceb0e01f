import { useId, useState } from 'react';
import { Form, useForm } from '../../ui/Form.js';
import { downloadFromApi } from './download.js';
import { collectionPath } from './collection-paths.js';
import { formatBytes } from '../../ui/format-bytes.js';

/** Downloads the collection's records (not the trash) as NDJSON or CSV, optionally only those matching the current filter. */
export function ExportPanel(props: { collection: string; filter: string }) {
  const id = useId();
  const [format, setFormat] = useState<'ndjson' | 'csv'>('ndjson');
  const [onlyMatching, setOnlyMatching] = useState(true);
  const [received, setReceived] = useState(0);
  const form = useForm(async () => {
    setReceived(0);
    const query = new URLSearchParams({ format });
    if (onlyMatching && props.filter) query.set('filter', props.filter);
    const saved = await downloadFromApi(`${collectionPath(props.collection, 'export')}?${query}`, `${props.collection}.${format}`, (bytes) => setReceived(bytes));
    return `Saved ${saved.name} (${formatBytes(saved.size)}).`;
  });

  return (
    <Form form={form} title="Export" titleId={`${id}-title`} submitLabel={`Download ${format.toUpperCase()}`} busyLabel="Downloading…">
      <fieldset className="inline-options">
        <legend>Format</legend>
        <label className="check">
          <input type="radio" name={`${id}-format`} checked={format === 'ndjson'} onChange={() => setFormat('ndjson')} /> NDJSON (one record per line)
        </label>
        <label className="check">
          <input type="radio" name={`${id}-format`} checked={format === 'csv'} onChange={() => setFormat('csv')} /> CSV (for spreadsheets)
        </label>
      </fieldset>
      {props.filter ? (
        <label className="check">
          <input type="checkbox" checked={onlyMatching} onChange={(event) => setOnlyMatching(event.target.checked)} /> Only records matching the filter <code>{props.filter}</code>
        </label>
      ) : null}
      {form.busy ? (
        <p role="status" className="progress">
          <progress aria-label="Export download" /> {formatBytes(received)} received
        </p>
      ) : null}
    </Form>
  );
}
