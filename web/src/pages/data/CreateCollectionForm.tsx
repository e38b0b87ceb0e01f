import { useState } from 'react';
import { api, fieldError } from '../../api.js';
import { Field } from '../../ui/Field.js';
import { Form, useForm } from '../../ui/Form.js';
import type { Collection } from '../../api-types.js';
import { COLLECTION_NAME, COLLECTION_NAME_RULE } from './collection-paths.js';

/** Creates a collection: name (docs/design.md §2 rules), description, public switch. */
export function CreateCollectionForm(props: { onCreated: (collection: Collection) => void }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [isPublic, setPublic] = useState(false);
  const [touched, setTouched] = useState(false);
  const form = useForm(async () => {
    setTouched(true);
    if (!COLLECTION_NAME.test(name)) return;
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
  });
  const error = form.error;
  const nameProblem = touched && name !== '' && !COLLECTION_NAME.test(name) ? COLLECTION_NAME_RULE : undefined;

  return (
    <Form form={form} title="New collection" titleId="create-collection-title" submitLabel="Create collection" busyLabel="Creating…">
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
    </Form>
  );
}
