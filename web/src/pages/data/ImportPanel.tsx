import { useId, useState } from 'react';
import { ApiError, upload } from '../../api.js';
import { DataTable } from '../../ui/DataTable.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { Field } from '../../ui/Field.js';
import { useForm } from '../../ui/Form.js';
import { FormActions } from '../../ui/FormActions.js';
import { ProgressBar } from '../../ui/ProgressBar.js';
import type { ImportReport } from '../../api-types.js';

type RefusedLine = ImportReport['rejected'][number];
import { collectionPath } from './collection-paths.js';
import { formatBytes } from '../../ui/format-bytes.js';

type Format = 'ndjson' | 'json' | 'csv';

const CONTENT_TYPES: Record<Format, string> = {
  ndjson: 'application/x-ndjson',
  json: 'application/json',
  csv: 'text/csv',
};

const FORMAT_WORDS: Record<Format, string> = {
  ndjson: 'NDJSON: one JSON object per line',
  json: 'JSON: one array of objects',
  csv: 'CSV: a header row of field names, then one row per record',
};

/** The columns a CSV export starts with: not record data, so a re-import leaves them out. */
const EXPORT_COLUMNS = ['id', 'createdAt', 'updatedAt'];

/** Whether a CSV file begins with the export's own columns (read from its first bytes only). */
async function startsLikeAnExport(file: File): Promise<boolean> {
  const head = await file.slice(0, 4096).text();
  const firstLine = head.replace(/^\uFEFF/, '').split(/\r?\n/, 1)[0] ?? '';
  const names = firstLine.split(',').map((name) => name.trim());
  return EXPORT_COLUMNS.every((name, index) => names[index] === name);
}

function formatOfName(name: string): Format | null {
  const lower = name.toLowerCase();
  if (lower.endsWith('.ndjson') || lower.endsWith('.jsonl')) return 'ndjson';
  if (lower.endsWith('.json')) return 'json';
  if (lower.endsWith('.csv')) return 'csv';
  return null;
}

/**
 * Uploads a file of records (docs/import-export.md) with a progress bar. In "partial" mode the
 * API keeps the good rows and reports each refused one by line; in "all" mode the first refused
 * row stops the import and nothing is kept.
 */
export function ImportPanel(props: { collection: string; onImported: () => void }) {
  const id = useId();
  const [file, setFile] = useState<File | null>(null);
  const [format, setFormat] = useState<Format>('ndjson');
  const [mode, setMode] = useState<'partial' | 'all'>('partial');
  /** Set when the chosen CSV file is an export: offers to leave its id and time columns out. */
  const [fromExport, setFromExport] = useState(false);
  const [skipExportColumns, setSkipExportColumns] = useState(true);
  const [progress, setProgress] = useState(0);
  const [report, setReport] = useState<ImportReport | null>(null);
  // The report, not a notice, says how it went; the error is shown by ImportError, which names the line.
  const form = useForm(async () => {
    if (!file) return;
    setReport(null);
    setProgress(0);
    const query = new URLSearchParams({ mode });
    if (format === 'csv' && fromExport && skipExportColumns) query.set('skipColumns', EXPORT_COLUMNS.join(','));
    const answer = await upload<ImportReport>(`${collectionPath(props.collection, 'import')}?${query}`, file, CONTENT_TYPES[format], setProgress);
    setReport(answer);
    if (answer.imported > 0) props.onImported();
  });

  function choose(chosen: File | null) {
    setFile(chosen);
    setReport(null);
    form.clear();
    const guessed = chosen ? formatOfName(chosen.name) : null;
    if (guessed) setFormat(guessed);
    setFromExport(false);
    setSkipExportColumns(true);
    if (chosen && guessed === 'csv') void startsLikeAnExport(chosen).then(setFromExport, () => setFromExport(false));
  }

  const uploading = form.busy;
  return (
    <section className="panel stack" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Import</h2>
      <form className="stack" onSubmit={(event) => void form.send(event)}>
        <Field label="File (NDJSON, JSON array or CSV)" hint={file ? `${file.name}, ${formatBytes(file.size)}` : undefined}>
          <input type="file" accept=".ndjson,.jsonl,.json,.csv,application/json,text/csv" onChange={(event) => choose(event.target.files?.[0] ?? null)} disabled={uploading} />
        </Field>
        <Field label="Format">
          <select value={format} onChange={(event) => setFormat(event.target.value as Format)} disabled={uploading}>
            {(Object.keys(FORMAT_WORDS) as Format[]).map((value) => (
              <option key={value} value={value}>{FORMAT_WORDS[value]}</option>
            ))}
          </select>
        </Field>
        {format === 'csv' && fromExport ? (
          <label className="check">
            <input type="checkbox" checked={skipExportColumns} onChange={(event) => setSkipExportColumns(event.target.checked)} disabled={uploading} /> Leave out the
            id, createdAt and updatedAt columns (this file is an export; the records get new ones)
          </label>
        ) : null}
        <fieldset className="inline-options" disabled={uploading}>
          <legend>When a row is refused</legend>
          <label className="check">
            <input type="radio" name={`${id}-mode`} checked={mode === 'partial'} onChange={() => setMode('partial')} /> Keep the other rows and report the refused ones
          </label>
          <label className="check">
            <input type="radio" name={`${id}-mode`} checked={mode === 'all'} onChange={() => setMode('all')} /> All or nothing: stop and keep nothing
          </label>
        </fieldset>
        <FormActions label="Import" busyLabel="Importing…" busy={uploading} disabled={!file} />
      </form>
      {uploading ? (
        <div role="status">
          <ProgressBar value={progress} label={progress < 1 ? 'Uploading' : 'Uploaded; saving the records'} />
        </div>
      ) : null}
      {form.error ? <ImportError error={form.error} /> : null}
      {report ? <ImportReportView report={report} /> : null}
    </section>
  );
}

/** A stopped import: the API's message already names the line and the field, so it is shown as it is. */
function ImportError(props: { error: unknown }) {
  const line = props.error instanceof ApiError ? (props.error.details as { line?: unknown } | null)?.line : undefined;
  if (typeof line !== 'number' || !(props.error instanceof ApiError)) return <ErrorText error={props.error} />;
  return (
    <div role="alert" className="error">
      <p>{props.error.message}</p>
      <p>Nothing was imported. Fix line {line} (or import with "Keep the other rows") and try again.</p>
    </div>
  );
}

function ImportReportView(props: { report: ImportReport }) {
  const { imported, rejected, rejectedCount } = props.report;
  return (
    <div className="stack import-report" aria-label="Import report" role="region">
      <p role="status">
        Imported {imported.toLocaleString()} {imported === 1 ? 'record' : 'records'}
        {rejectedCount > 0 ? `; ${rejectedCount.toLocaleString()} ${rejectedCount === 1 ? 'line was' : 'lines were'} refused.` : '.'}
      </p>
      {rejected.length > 0 ? (
        <DataTable<RefusedLine>
          caption={`Refused lines${rejectedCount > rejected.length ? ` (the first ${rejected.length.toLocaleString()})` : ''}`}
          captionShown
          rows={rejected}
          rowKey={(row) => String(row.line)}
          columns={[
            { id: 'line', label: 'Line', fixed: true, cell: (row) => row.line },
            { id: 'why', label: 'Why', className: 'wrap-cell', cell: whyRefused },
          ]}
        />
      ) : null}
    </div>
  );
}

/** The API's message, and each field it names when there are several. */
function whyRefused(row: RefusedLine) {
  const fields = fieldsOf(row.error.details);
  return (
    <>
      {row.error.message}
      {fields.length > 1 ? (
        <ul>
          {fields.map((entry, index) => (
            <li key={index}><code>{entry.field}</code> {entry.message}</li>
          ))}
        </ul>
      ) : null}
    </>
  );
}

function fieldsOf(details: Record<string, unknown> | undefined): { field: string; message: string }[] {
  const errors = details?.errors;
  if (!Array.isArray(errors)) return [];
  return errors.filter((entry): entry is { field: string; message: string } => typeof entry?.field === 'string');
}
