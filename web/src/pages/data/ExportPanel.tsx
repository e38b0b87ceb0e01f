import { useId, useState } from 'react';
import { ErrorText } from '../../ui/ErrorText.js';
import { downloadFromApi } from './download.js';
import { collectionPath } from './collection-paths.js';
import { formatBytes } from '../../ui/format-bytes.js';

/** Downloads the collection's records (not the trash) as NDJSON or CSV, optionally only those matching the current filter. */
export function ExportPanel(props: { collection: string; filter: string }) {
  const id = useId();
  const [format, setFormat] = useState<'ndjson' | 'csv'>('ndjson');
  const [onlyMatching, setOnlyMatching] = useState(true);
  const [received, setReceived] = useState<number | null>(null);
  const [done, setDone] = useState('');
  const [error, setError] = useState<unknown>(null);

  async function start() {
    setError(null);
    setDone('');
    setReceived(0);
    const query = new URLSearchParams({ format });
    if (onlyMatching && props.filter) query.set('filter', props.filter);
    try {
      const saved = await downloadFromApi(`${collectionPath(props.collection, 'export')}?${query}`, `${props.collection}.${format}`, (bytes) => setReceived(bytes));
      setDone(`Saved ${saved.name} (${formatBytes(saved.size)}).`);
    } catch (caught) {
      setError(caught);
    } finally {
      setReceived(null);
    }
  }

  return (
    <section className="panel stack" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Export</h2>
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
      <div className="actions">
        <button type="button" onClick={() => void start()} disabled={received !== null}>
          {received !== null ? 'Downloading…' : `Download ${format.toUpperCase()}`}
        </button>
      </div>
      {received !== null ? (
        <p role="status" className="progress">
          <progress aria-label="Export download" /> {formatBytes(received)} received
        </p>
      ) : null}
      {done ? <p role="status">{done}</p> : null}
      <ErrorText error={error} />
    </section>
  );
}
