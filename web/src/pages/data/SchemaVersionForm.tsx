import { useId, useState, type FormEvent } from 'react';
import { api } from '../../api.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { FormActions } from '../../ui/FormActions.js';
import type { SchemaVersion } from '../../api-types.js';
import { collectionPath } from './collection-paths.js';

const STARTER = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1 },
    email: { type: 'string', format: 'email' },
    age: { type: 'integer', minimum: 0 },
  },
  required: ['name'],
};

/**
 * Writes a new schema version (JSON Schema 2020-12) in a JSON editor. It is saved as a draft;
 * with "activate" ticked, the page then activates it the way its Activate button does (warning
 * first when stored records would not match).
 */
export function SchemaVersionForm(props: {
  collection: string;
  startFrom: Record<string, unknown> | null;
  onCreated: (version: SchemaVersion, activate: boolean) => void;
  onCancel: () => void;
}) {
  const id = useId();
  const [text, setText] = useState(() => `${JSON.stringify(props.startFrom ?? STARTER, null, 2)}\n`);
  const [activate, setActivate] = useState(true);
  const [error, setError] = useState<unknown>(null);
  const [localError, setLocalError] = useState('');
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setError(null);
    setLocalError('');
    let schema: unknown;
    try {
      schema = JSON.parse(text);
    } catch (parseError) {
      setLocalError(`Not valid JSON: ${(parseError as Error).message}`);
      return;
    }
    if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
      setLocalError('A schema is one JSON object, like {"type": "object", "properties": {…}}.');
      return;
    }
    setBusy(true);
    try {
      const version = await api<SchemaVersion>('POST', collectionPath(props.collection, 'schemas'), { schema });
      props.onCreated(version, activate);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="panel stack" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>New schema version</h2>
      <form className="stack" onSubmit={submit}>
        <div className="field">
          <label htmlFor={`${id}-schema`}>Schema (JSON Schema 2020-12)</label>
          <textarea
            id={`${id}-schema`}
            className="code"
            value={text}
            onChange={(event) => setText(event.target.value)}
            rows={Math.min(28, Math.max(10, text.split('\n').length + 1))}
            wrap="off"
            spellCheck={false}
            aria-invalid={localError || error ? true : undefined}
            aria-describedby={`${id}-hint`}
          />
          <small id={`${id}-hint`} className="hint">
            Describes one record's data. A version never changes once created; write a new one to change the rules. Records already stored are not re-checked.
          </small>
        </div>
        <label className="check">
          <input type="checkbox" checked={activate} onChange={(event) => setActivate(event.target.checked)} /> Activate it now (every new or changed record must match it)
        </label>
        <ErrorText error={localError || null} />
        <ErrorText error={error} />
        <FormActions label={activate ? 'Create and activate' : 'Create as draft'} busyLabel="Saving…" busy={busy} onCancel={props.onCancel} />
      </form>
    </section>
  );
}
