import { useEffect, useRef, useState } from 'react';
import { api, fieldError } from '../../api.js';
import { navigate, useRoute, useTitle } from '../../router.js';
import { useSession } from '../../session.js';
import { ConfirmDialog } from '../../ui/ConfirmDialog.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { Field } from '../../ui/Field.js';
import { Form, useForm } from '../../ui/Form.js';
import { Time } from '../../ui/Time.js';
import { useApiQuery } from '../../query/useApiQuery.js';
import { CollectionTabs } from './CollectionTabs.js';
import type { Collection, SchemaVersion } from '../../api-types.js';
import { ApiSnippets } from './ApiSnippets.js';
import { SubmissionsSection } from './SubmissionsSection.js';
import { COLLECTION_NAME, COLLECTION_NAME_RULE, collectionPath, pagePath } from './collection-paths.js';
import './data.css';

/** `/collections/:name`: a collection's settings (name, description, public switch, public submissions) and its move to the trash. */
export function CollectionPage() {
  const { params } = useRoute();
  const name = params.name ?? '';
  useTitle(`${name}: settings`);
  const session = useSession();
  const collection = useApiQuery([collectionPath(name)], (signal) => api<Collection>('GET', collectionPath(name), undefined, signal));
  const canUpdate = session.can('collections:update');
  const activeVersion = collection.data?.activeSchemaVersion ?? null;
  const activeSchemaPath = collectionPath(name, 'schemas', String(activeVersion));
  const activeSchema = useApiQuery([activeSchemaPath], (signal) => api<SchemaVersion>('GET', activeSchemaPath, undefined, signal), { enabled: activeVersion !== null });

  const [newName, setNewName] = useState('');
  const [description, setDescription] = useState('');
  const [isPublic, setPublic] = useState(false);
  const [confirmTrash, setConfirmTrash] = useState(false);
  const [confirmPublic, setConfirmPublic] = useState(false);
  /** Set by the "Make public" answer for the save it starts: a ref, as that save runs before a re-render. */
  const publicConfirmed = useRef(false);

  useEffect(() => {
    if (!collection.data) return;
    setNewName(collection.data.name);
    setDescription(collection.data.settings.description);
    setPublic(collection.data.public);
  }, [collection.data]);

  const form = useForm(async () => {
    const current = collection.data;
    if (!current) return;
    // Opening a collection to everyone is worth a second look: the save waits for the answer.
    const opening = isPublic && !current.public;
    if (opening && !publicConfirmed.current) {
      setConfirmPublic(true);
      return;
    }
    publicConfirmed.current = false;
    const changes = {
      ...(newName !== current.name ? { name: newName } : {}),
      ...(isPublic !== current.public ? { public: isPublic } : {}),
      ...(description !== current.settings.description ? { settings: { description } } : {}),
    };
    if (Object.keys(changes).length === 0) return 'Nothing changed.';
    const updated = await api<Collection>('PATCH', collectionPath(current.name), changes);
    if (updated.name !== current.name) navigate(pagePath(updated.name), { replace: true });
    else await collection.reload();
    return 'Saved.';
  });

  function saveConfirmedPublic() {
    setConfirmPublic(false);
    publicConfirmed.current = true;
    void form.send();
  }

  async function moveToTrash() {
    await api('DELETE', collectionPath(name));
    setConfirmTrash(false);
    navigate('/trash');
  }

  const current = collection.data;
  const nameProblem = newName !== '' && !COLLECTION_NAME.test(newName) ? COLLECTION_NAME_RULE : fieldError(form.error, 'name');

  return (
    <div className="stack">
      <CollectionTabs name={name} title={`${name}: settings`} />
      <ErrorText error={collection.error} />
      {current ? (
        <>
          <dl className="facts">
            <dt>Id</dt>
            <dd><code>{current.id}</code></dd>
            <dt>Created</dt>
            <dd><Time value={current.createdAt} /></dd>
            <dt>Active schema</dt>
            <dd>{current.activeSchemaVersion === null ? 'none: any JSON object is accepted' : `version ${current.activeSchemaVersion}`}</dd>
          </dl>
          <Form
            form={form}
            label="Collection settings"
            submitLabel="Save settings"
            busyLabel="Saving…"
            disabled={Boolean(nameProblem && newName !== current.name)}
            readOnlyNote={canUpdate ? undefined : `Your role (${session.workspace.role}) can read these settings but not change them.`}
          >
            <Field label="Name" error={nameProblem} hint="Renaming changes the API paths that use the name; paths by id keep working.">
              <input value={newName} onChange={(event) => setNewName(event.target.value)} disabled={!canUpdate} spellCheck={false} autoComplete="off" />
            </Field>
            <Field label="Description" error={fieldError(form.error, 'settings.description')}>
              <textarea value={description} onChange={(event) => setDescription(event.target.value)} rows={3} maxLength={2000} disabled={!canUpdate} />
            </Field>
            <label className="check">
              <input type="checkbox" role="switch" checked={isPublic} onChange={(event) => setPublic(event.target.checked)} disabled={!canUpdate} />
              Public: anyone can list and read its records without signing in (writes still need a key or a session)
            </label>
          </Form>
          {activeVersion === null || activeSchema.data ? (
            <>
              <SubmissionsSection collection={current} schema={activeSchema.data?.schema ?? null} canUpdate={canUpdate} onSaved={collection.reload} />
              <ApiSnippets collection={current.name} schema={activeSchema.data?.schema ?? null} />
            </>
          ) : null}
          {session.can('collections:delete') ? (
            <section className="panel danger-zone stack" aria-labelledby="trash-title">
              <h2 id="trash-title">Move to the trash</h2>
              <p>Its records and files are kept and can be restored from the Trash; until then they cannot be read or written.</p>
              <div className="actions">
                <button type="button" className="quiet-danger" onClick={() => setConfirmTrash(true)}>
                  Move {current.name} to the trash
                </button>
              </div>
            </section>
          ) : null}
        </>
      ) : null}
      <ConfirmDialog
        open={confirmTrash}
        title={`Move ${name} to the trash?`}
        message="Its records, schema versions and files are kept, but cannot be read or written until you restore it. Programs using it will get 404."
        confirmLabel="Move to trash"
        danger
        onConfirm={moveToTrash}
        onCancel={() => setConfirmTrash(false)}
      />
      <ConfirmDialog
        open={confirmPublic}
        title={`Make ${name} public?`}
        message="Anyone on the internet who knows the collection's id can then list and read all of its records, and download the files attached to them, without signing in."
        confirmLabel="Make public"
        danger
        onConfirm={saveConfirmedPublic}
        onCancel={() => setConfirmPublic(false)}
      />
    </div>
  );
}
