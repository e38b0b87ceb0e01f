import { useId, useState } from 'react';
import { api } from '../../api.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { useForm } from '../../ui/Form.js';
import type { ServiceAccount } from '../../api-types.js';
import { ACCOUNT_ROLES } from './role-words.js';

/**
 * A service account's role, changed in place: a one-line form in its row of the table. Its keys
 * follow the new role at once.
 */
export function ServiceAccountRole(props: { account: ServiceAccount; onChanged: (account: ServiceAccount) => void }): React.JSX.Element {
  const { account } = props;
  const [role, setRole] = useState(account.role);
  const roleId = useId();
  const form = useForm(async () => {
    props.onChanged(await api<ServiceAccount>('PATCH', `/v1/service-accounts/${account.id}`, { role }));
    return 'Role saved; its keys follow it now.';
  });

  return (
    <>
      <div className="inline-form">
        <label htmlFor={roleId} className="visually-hidden">
          Role of {account.name}
        </label>
        <select
          id={roleId}
          className="role-picker"
          value={role}
          onChange={(event) => {
            setRole(event.target.value as ServiceAccount['role']);
            form.clear();
          }}
        >
          {ACCOUNT_ROLES.map((choice) => (
            <option key={choice.role} value={choice.role}>
              {choice.role}
            </option>
          ))}
        </select>
        {role !== account.role ? (
          <button type="button" onClick={() => void form.send()} disabled={form.busy} aria-busy={form.busy}>
            {form.busy ? 'Saving…' : 'Save role'}
          </button>
        ) : null}
        <span role="status" className="hint">
          {form.notice}
        </span>
      </div>
      <ErrorText error={form.error} />
    </>
  );
}
