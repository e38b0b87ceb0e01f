import { useState } from 'react';
import { api, fieldError } from '../../api.js';
import { Field } from '../../ui/Field.js';
import { Form, useForm } from '../../ui/Form.js';
import type { ServiceAccount } from '../../api-types.js';
import { ACCOUNT_ROLES } from './role-words.js';

/** Makes a service account: a name and a role. Its keys are issued afterwards, from its row. */
export function CreateServiceAccountForm(props: { onCreated: (account: ServiceAccount) => void; onCancel: () => void }): React.JSX.Element {
  const [name, setName] = useState('');
  const [role, setRole] = useState<ServiceAccount['role']>('editor');
  const form = useForm(async () => {
    props.onCreated(await api<ServiceAccount>('POST', '/v1/service-accounts', { name: name.trim(), role }));
  });

  return (
    <Form form={form} title="New service account" submitLabel="Create service account" busyLabel="Creating…" onCancel={props.onCancel}>
      <Field label="Name" hint="The integration it stands for, like “nightly sync”." error={fieldError(form.error, 'name')}>
        <input value={name} onChange={(event) => setName(event.target.value)} required maxLength={200} autoFocus />
      </Field>
      <Field label="Role" error={fieldError(form.error, 'role')}>
        <select value={role} onChange={(event) => setRole(event.target.value as ServiceAccount['role'])}>
          {ACCOUNT_ROLES.map((choice) => (
            <option key={choice.role} value={choice.role}>
              {choice.words}
            </option>
          ))}
        </select>
      </Field>
    </Form>
  );
}
