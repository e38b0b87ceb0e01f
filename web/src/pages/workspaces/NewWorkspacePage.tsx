import { useState } from 'react';
import { api, fieldError } from '../../api.js';
import { navigate, useTitle } from '../../router.js';
import type { Workspace } from '../../api-types.js';
import { useAuth } from '../../session.js';
import { Field } from '../../ui/Field.js';
import { Form, useForm } from '../../ui/Form.js';

/** A new workspace, owned by the person who makes it; they land in it. */
export function NewWorkspacePage(): React.JSX.Element {
  useTitle('New workspace');
  const { state, refresh } = useAuth();
  const [name, setName] = useState('');
  const hasNone = state.status === 'signed-in' && state.workspaces.length === 0;
  const form = useForm(async () => {
    const created = await api<Workspace>('POST', '/v1/workspaces', { name });
    if (state.status === 'signed-in') state.switchWorkspace(created.id);
    await refresh();
    navigate('/');
  });

  return (
    <section>
      <h1>New workspace</h1>
      {hasNone ? <p className="notice">You are not a member of any workspace. Create one, or ask for an invite to an existing one.</p> : null}
      <p>A workspace holds its own collections, keys, webhooks and people. You will be its owner.</p>
      <Form form={form} label="New workspace" submitLabel="Create workspace" busyLabel="Creating…" disabled={name.trim() === ''}>
        <Field label="Workspace name" error={fieldError(form.error, 'name')}>
          <input required maxLength={200} value={name} onChange={(event) => setName(event.target.value)} />
        </Field>
      </Form>
    </section>
  );
}
