import { useState, type FormEvent } from 'react';
import { api, fieldError } from '../../api.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { Field } from '../../ui/Field.js';
import { FormActions } from '../../ui/FormActions.js';
import type { ServiceAccount } from '../../api-types.js';
import { ACCOUNT_ROLES } from './role-words.js';

/** Makes a service account: a name and a role. Its keys are issued afterwards, from its row. */
export function CreateServiceAccountForm(props: { onCreated: (account: ServiceAccount) => void; onCancel: () => void }): React.JSX.Element {
  const [name, setName] = useState('');
  const [role, setRole] = useState<ServiceAccount['role']>('editor');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      props.onCreated(await api<ServiceAccount>('POST', '/v1/service-accounts', { name: name.trim(), role }));
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="panel" onSubmit={(event) => void submit(event)} aria-label="New service account">
      <h2>New service account</h2>
      <Field label="Name" hint="The integration it stands for, like “nightly sync”." error={fieldError(error, 'name')}>
        <input value={name} onChange={(event) => setName(event.target.value)} required maxLength={200} autoFocus />
      </Field>
      <Field label="Role" error={fieldError(error, 'role')}>
        <select value={role} onChange={(event) => setRole(event.target.value as ServiceAccount['role'])}>
          {ACCOUNT_ROLES.map((choice) => (
            <option key={choice.role} value={choice.role}>
              {choice.words}
            </option>
          ))}
        </select>
      </Field>
      <ErrorText error={error} />
      <FormActions label="Create service account" busyLabel="Creating…" busy={busy} onCancel={props.onCancel} />
    </form>
  );
}
