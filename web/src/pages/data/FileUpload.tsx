import { useId, useState, type FormEvent } from 'react';
import { upload } from '../../api.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { Field } from '../../ui/Field.js';
import { FormActions } from '../../ui/FormActions.js';
import { ProgressBar } from '../../ui/ProgressBar.js';
import type { StoredFile } from '../../api-types.js';
import { collectionPath } from './collection-paths.js';
import { formatBytes } from '../../ui/format-bytes.js';

/** Uploads one file into the collection, with a progress bar; the name and type come from the chosen file. */
export function FileUpload(props: { collection: string; onUploaded: (file: StoredFile) => void }) {
  const id = useId();
  const [file, setFile] = useState<File | null>(null);
  const [progress, setProgress] = useState<number | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [inputKey, setInputKey] = useState(0);

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (!file) return;
    setError(null);
    setProgress(0);
    try {
      const path = `${collectionPath(props.collection, 'files')}?${new URLSearchParams({ name: file.name })}`;
      const stored = await upload<StoredFile>(path, file, file.type || 'application/octet-stream', setProgress);
      setFile(null);
      setInputKey((key) => key + 1);
      props.onUploaded(stored);
    } catch (caught) {
      setError(caught);
    } finally {
      setProgress(null);
    }
  }

  return (
    <form className="panel stack" onSubmit={submit} aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Upload a file</h2>
      <Field label="File" hint={file ? `${file.name}, ${formatBytes(file.size)}, ${file.type || 'unknown type'}` : undefined}>
        <input key={inputKey} type="file" onChange={(event) => setFile(event.target.files?.[0] ?? null)} disabled={progress !== null} />
      </Field>
      <FormActions label="Upload" busyLabel="Uploading…" busy={progress !== null} disabled={!file} />
      {progress !== null ? (
        <div role="status">
          <ProgressBar value={progress} label={progress < 1 ? `Uploading ${file?.name ?? ''}` : 'Uploaded; checking'} />
        </div>
      ) : null}
      <ErrorText error={error} />
    </form>
  );
}
