import { useState } from 'react';
import { api, fieldError, loadAll, type Page } from '../../api.js';
import { useRoute, useTitle } from '../../router.js';
import { ConfirmDialog } from '../../ui/ConfirmDialog.js';
import { ACTIONS_COLUMN, DataTable } from '../../ui/DataTable.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { Field } from '../../ui/Field.js';
import { Form, useForm } from '../../ui/Form.js';
import { useApiQuery } from '../../query/useApiQuery.js';
import { CollectionTabs } from './CollectionTabs.js';
import type { RecordIndex } from '../../api-types.js';
import { collectionPath } from './collection-paths.js';
import './data.css';

/** `/collections/:name/indexes`: owners and admins index record fields so filters and sorts on them stay fast. */
export function IndexesPage() {
  const { params } = useRoute();
  const name = params.name ?? '';
  useTitle(`${name}: indexes`);
  const indexes = useApiQuery([collectionPath(name, 'indexes')], (signal): Promise<Page<RecordIndex>> => loadAll<RecordIndex>(collectionPath(name, 'indexes'), signal).then((data) => ({ data, nextCursor: null })));
  const [indexName, setIndexName] = useState('');
  const [fields, setFields] = useState('');
  const [unique, setUnique] = useState(false);
  const [deleting, setDeleting] = useState<RecordIndex | null>(null);
  /** What the last delete did; a create says so in its own form. */
  const [notice, setNotice] = useState('');

  const form = useForm(async () => {
    const list = fields.split(',').map((field) => field.trim()).filter(Boolean);
    const created = await api<RecordIndex>('POST', collectionPath(name, 'indexes'), { name: indexName, fields: list, unique });
    setNotice('');
    setIndexName('');
    setFields('');
    setUnique(false);
    await indexes.reload();
    return `Index ${created.name} is ready.`;
  });

  async function remove(index: RecordIndex) {
    await api('DELETE', collectionPath(name, 'indexes', index.name));
    setDeleting(null);
    // One notice at a time: the form's "ready" would be out of date beside this one.
    form.clear();
    setNotice(`Index ${index.name} is removed.`);
    await indexes.reload();
  }

  const list = indexes.data?.data ?? [];
  return (
    <div className="stack">
      <CollectionTabs name={name} title={`${name}: indexes`} />
      <p className="hint">An index makes filters and sorts on its fields fast. A unique index also refuses a record whose values repeat another's (409). Building one holds writes to this collection while it runs.</p>
      {notice ? <p role="status" className="notice">{notice}</p> : null}
      <ErrorText error={indexes.error} />
      {indexes.data && list.length === 0 ? <p className="empty">No indexes yet.</p> : null}
      {list.length > 0 ? (
        <DataTable<RecordIndex>
          caption={`Indexes of ${name}`}
          rows={list}
          rowKey={(index) => index.name}
          columns={[
            { id: 'name', label: 'Name', fixed: true, cell: (index) => index.name, title: (index) => index.name },
            { id: 'fields', label: 'Fields', cell: (index) => index.fields.map((field) => <code key={field}>{field} </code>), title: (index) => index.fields.join(', ') },
            { id: 'unique', label: 'Unique', cell: (index) => (index.unique ? 'unique' : 'no') },
            {
              ...ACTIONS_COLUMN,
                            cell: (index) => (
                <button type="button" className="quiet-danger" onClick={() => setDeleting(index)} aria-label={`Delete index ${index.name}`}>
                  Delete
                </button>
              ),
            },
          ]}
        />
      ) : null}
      <Form form={form} title="New index" submitLabel="Create index" busyLabel="Building…">
        <Field label="Index name" error={fieldError(form.error, 'name')} hint="Lower-case letters, digits and _, starting with a letter.">
          <input value={indexName} onChange={(event) => setIndexName(event.target.value)} spellCheck={false} autoComplete="off" placeholder="by_email" />
        </Field>
        <Field label="Fields" error={fieldError(form.error, 'fields')} hint="One to four, comma separated: data.<path>, createdAt or updatedAt, e.g. data.email or data.status, createdAt.">
          <input value={fields} onChange={(event) => setFields(event.target.value)} spellCheck={false} autoComplete="off" placeholder="data.email" />
        </Field>
        <label className="check">
          <input type="checkbox" checked={unique} onChange={(event) => setUnique(event.target.checked)} /> Unique: no two records may have the same values
        </label>
      </Form>
      <ConfirmDialog
        open={deleting !== null}
        title={`Delete index ${deleting?.name ?? ''}?`}
        message={`Filters and sorts on ${deleting?.fields.join(', ') ?? ''} may become slow${deleting?.unique ? ', and duplicate values will no longer be refused' : ''}. No record is deleted.`}
        confirmLabel="Delete index"
        danger
        onConfirm={() => (deleting ? remove(deleting) : undefined)}
        onCancel={() => setDeleting(null)}
      />
    </div>
  );
}
