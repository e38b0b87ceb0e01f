import { useState, type FormEvent } from 'react';
import { api, fieldError } from '../../api.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { Field } from '../../ui/Field.js';
import { FormActions } from '../../ui/FormActions.js';
import type { Collection } from '../../api-types.js';
import { COLLECTION_NAME, COLLECTION_NAME_RULE } from './collection-paths.js';

/** Creates a collection: name (docs/design.md §2 rules), description, public switch. */
export function CreateCollectionForm(props: { onCreated: (collection: Collection) => void }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [isPublic, setPublic] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [touched, setTouched] = useState(false);

  const nameProblem = touched && name !== '' && !COLLECTION_NAME.test(name) ? COLLECTION_NAME_RULE : undefined;

  async function submit(event: FormEvent) {
    event.preventDefault();
    setTouched(true);
    if (!COLLECTION_NAME.test(name)) {
      setError(null);
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const collection = await api<Collection>('POST', '/v1/collections', {
        name,
        public: isPublic,
        ...(description ? { settings: { description } } : {}),
      });
      setName('');
      setDescription('');
      setPublic(false);
      setTouched(false);
      props.onCreated(collection);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="panel stack" onSubmit={submit} aria-labelledby="create-collection-title" noValidate>
      <h2 id="create-collection-title">New collection</h2>
      <Field label="Name" hint={`${COLLECTION_NAME_RULE} It is used in API paths.`} error={nameProblem ?? (touched && name === '' ? 'A collection needs a name.' : fieldError(error, 'name'))}>
        <input
          value={name}
          onChange={(event) => setName(event.target.value)}
          onBlur={() => setTouched(true)}
          autoComplete="off"
          spellCheck={false}
          placeholder="leads"
        />
      </Field>
      <Field label="Description (optional)" error={fieldError(error, 'settings.description')}>
        <textarea value={description} onChange={(event) => setDescription(event.target.value)} rows={2} maxLength={2000} />
      </Field>
      <label className="check">
        <input type="checkbox" checked={isPublic} onChange={(event) => setPublic(event.target.checked)} />
        Public: anyone can list and read its records without signing in
      </label>
      <ErrorText error={error} />
      <FormActions label="Create collection" busyLabel="Creating…" busy={busy} />
    </form>
  );
}
