import { useId, useState } from 'react';
import { api } from '../../api.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { Time } from '../../ui/Time.js';
import type { ServiceAccount } from '../../api-types.js';
import { ACCOUNT_ROLES } from './role-words.js';

/**
 * One service account: its role can be changed in place (its keys follow the new role at once),
 * keys issued for it, and it can be deleted (the page asks first).
 */
export function ServiceAccountRow(props: {
  account: ServiceAccount;
  activeKeys: number;
  onChanged: (account: ServiceAccount) => void;
  onIssueKey: () => void;
  onDelete: () => void;
}): React.JSX.Element {
  const { account } = props;
  const [role, setRole] = useState(account.role);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  const roleId = useId();

  const saveRole = async () => {
    setBusy(true);
    setError(null);
    setSaved(false);
    try {
      props.onChanged(await api<ServiceAccount>('PATCH', `/v1/service-accounts/${account.id}`, { role }));
      setSaved(true);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  return (
    <tr>
      <th scope="row">{account.name}</th>
      <td>
        <div className="inline-form">
          <label htmlFor={roleId} className="visually-hidden">
            Role of {account.name}
          </label>
          <select id={roleId} className="role-picker" value={role} onChange={(event) => { setRole(event.target.value as ServiceAccount['role']); setSaved(false); }}>
            {ACCOUNT_ROLES.map((choice) => (
              <option key={choice.role} value={choice.role}>
                {choice.role}
              </option>
            ))}
          </select>
          {role !== account.role ? (
            <button type="button" onClick={() => void saveRole()} disabled={busy} aria-busy={busy}>
              {busy ? 'Saving…' : 'Save role'}
            </button>
          ) : null}
          <span role="status" className="hint">
            {saved ? 'Role saved; its keys follow it now.' : ''}
          </span>
        </div>
        <ErrorText error={error} />
      </td>
      <td>{props.activeKeys}</td>
      <td>
        <Time value={account.createdAt} />
      </td>
      <td className="row-actions">
        <button type="button" onClick={props.onIssueKey} aria-label={`Issue key for ${account.name}`}>
          Issue key
        </button>
        <button type="button" className="quiet-danger" onClick={props.onDelete} aria-label={`Delete ${account.name}`}>
          Delete
        </button>
      </td>
    </tr>
  );
}
