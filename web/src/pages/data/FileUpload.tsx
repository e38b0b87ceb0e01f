import { useState } from 'react';
import { upload } from '../../api.js';
import { Field } from '../../ui/Field.js';
import { Form, useForm } from '../../ui/Form.js';
import { ProgressBar } from '../../ui/ProgressBar.js';
import type { StoredFile } from '../../api-types.js';
import { collectionPath } from './collection-paths.js';
import { formatBytes } from '../../ui/format-bytes.js';

/** Uploads one file into the collection, with a progress bar; the name and type come from the chosen file. */
export function FileUpload(props: { collection: string; onUploaded: (file: StoredFile) => void }) {
  const [file, setFile] = useState<File | null>(null);
  const [progress, setProgress] = useState(0);
  const [inputKey, setInputKey] = useState(0);
  const form = useForm(async () => {
    if (!file) return;
    setProgress(0);
    const path = `${collectionPath(props.collection, 'files')}?${new URLSearchParams({ name: file.name })}`;
    const stored = await upload<StoredFile>(path, file, file.type || 'application/octet-stream', setProgress);
    setFile(null);
    setInputKey((key) => key + 1);
    props.onUploaded(stored);
  });

  return (
    <Form form={form} title="Upload a file" submitLabel="Upload" busyLabel="Uploading…" disabled={!file}>
      <Field label="File" hint={file ? `${file.name}, ${formatBytes(file.size)}, ${file.type || 'unknown type'}` : undefined}>
        <input key={inputKey} type="file" onChange={(event) => setFile(event.target.files?.[0] ?? null)} disabled={form.busy} />
      </Field>
      {form.busy ? (
        <div role="status">
          <ProgressBar value={progress} label={progress < 1 ? `Uploading ${file?.name ?? ''}` : 'Uploaded; checking'} />
        </div>
      ) : null}
    </Form>
  );
}
