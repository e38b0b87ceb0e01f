import { useState, type FormEvent } from 'react';
import { api, fieldError, loadAll } from '../../api.js';
import { ConfirmDialog } from '../../ui/ConfirmDialog.js';
import { CopyButton } from '../../ui/CopyButton.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { Field } from '../../ui/Field.js';
import { Time } from '../../ui/Time.js';
import { useApiQuery } from '../../query/useApiQuery.js';
import type { Invite } from '../../api-types.js';
import { ASSIGNABLE_ROLES } from './roles.js';
import { newestFirst } from '../../ui/newest-first.js';

/**
 * Invites: no email is sent, so the person who invites copies the link and passes it on. The link
 * is shown only right after it is made (the service keeps a hash); revoke and invite again if lost.
 */
export function InvitesPanel(props: { onAccepted: () => void }): React.JSX.Element {
  const invites = useApiQuery(['/v1/invites'], async (signal) => newestFirst(await loadAll<Invite>('/v1/invites', signal), (invite) => invite.createdAt));
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<string>('editor');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [created, setCreated] = useState<Invite | null>(null);
  const [revoking, setRevoking] = useState<Invite | null>(null);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      setCreated(await api<Invite>('POST', '/v1/invites', { email, role }));
      setEmail('');
      await invites.reload();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  const revoke = async () => {
    if (!revoking) return;
    await api('DELETE', `/v1/invites/${revoking.id}`);
    if (created?.id === revoking.id) setCreated(null);
    setRevoking(null);
    await invites.reload();
    props.onAccepted();
  };

  return (
    <div className="panel">
      <h2>Invites</h2>
      <form className="inline-form" onSubmit={(event) => void submit(event)} noValidate aria-label="Invite someone">
        <Field label="Email to invite" error={fieldError(error, 'email')}>
          <input type="email" required value={email} onChange={(event) => setEmail(event.target.value)} />
        </Field>
        <Field label="Role" error={fieldError(error, 'role')}>
          <select value={role} onChange={(event) => setRole(event.target.value)}>
            {ASSIGNABLE_ROLES.map((option) => (
              <option key={option} value={option}>
                {option}
              </option>
            ))}
          </select>
        </Field>
        <button type="submit" className="primary" disabled={busy || email.trim() === ''} aria-busy={busy}>
          {busy ? 'Inviting…' : 'Create invite link'}
        </button>
      </form>
      <ErrorText error={error ?? invites.error} />

      {created?.url ? (
        <section className="secret-once" aria-label="New invite link">
          <h3>Invite link for {created.email}</h3>
          <p className="warning" role="note">
            No email is sent: copy this link and give it to {created.email}. It works once, for 7 days, and is shown only now.
          </p>
          <div className="copy-row">
            <code aria-label="Invite link">{created.url}</code>
            <CopyButton text={created.url} label="Copy invite link" />
          </div>
        </section>
      ) : null}

      {invites.data && invites.data.length > 0 ? (
        <div className="table-wrap" tabIndex={0} role="region" aria-label="Invites waiting to be accepted">
          <table>
            <caption className="muted">Waiting to be accepted</caption>
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Invited</th>
                <th scope="col">Expires</th>
                <th scope="col"><span className="visually-hidden">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {invites.data.map((invite) => (
                <tr key={invite.id}>
                  <td>{invite.email}</td>
                  <td>{invite.role}</td>
                  <td><Time value={invite.createdAt} /></td>
                  <td><Time value={invite.expiresAt} /></td>
                  <td>
                    <button type="button" className="quiet-danger" onClick={() => setRevoking(invite)} aria-label={`Revoke the invite for ${invite.email}`}>
                      Revoke
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : invites.data ? (
        <p className="muted">No invites are waiting.</p>
      ) : null}

      <ConfirmDialog
        open={revoking !== null}
        title="Revoke this invite?"
        message={<p>The link sent to {revoking?.email} will stop working. You can invite them again later.</p>}
        confirmLabel="Revoke invite"
        danger
        onConfirm={revoke}
        onCancel={() => setRevoking(null)}
      />
    </div>
  );
}
