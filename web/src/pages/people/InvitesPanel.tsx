import { useState } from 'react';
import { api, fieldError, loadAll } from '../../api.js';
import { ConfirmDialog } from '../../ui/ConfirmDialog.js';
import { CopyButton } from '../../ui/CopyButton.js';
import { ACTIONS_COLUMN, DataTable } from '../../ui/DataTable.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { Field } from '../../ui/Field.js';
import { useForm } from '../../ui/Form.js';
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
  const [created, setCreated] = useState<Invite | null>(null);
  const [revoking, setRevoking] = useState<Invite | null>(null);
  // A one-line form: its own markup, the shared busy and error.
  const form = useForm(async () => {
    setCreated(await api<Invite>('POST', '/v1/invites', { email, role }));
    setEmail('');
    await invites.reload();
  });

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
      <form className="inline-form" onSubmit={(event) => void form.send(event)} noValidate aria-label="Invite someone">
        <Field label="Email to invite" error={fieldError(form.error, 'email')}>
          <input type="email" required value={email} onChange={(event) => setEmail(event.target.value)} />
        </Field>
        <Field label="Role" error={fieldError(form.error, 'role')}>
          <select value={role} onChange={(event) => setRole(event.target.value)}>
            {ASSIGNABLE_ROLES.map((option) => (
              <option key={option} value={option}>
                {option}
              </option>
            ))}
          </select>
        </Field>
        <button type="submit" className="primary" disabled={form.busy || email.trim() === ''} aria-busy={form.busy}>
          {form.busy ? 'Inviting…' : 'Create invite link'}
        </button>
      </form>
      <ErrorText error={form.error ?? invites.error} />

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
        <>
          <p className="muted">Waiting to be accepted</p>
          <DataTable<Invite>
            caption="Invites waiting to be accepted"
            rows={invites.data}
            rowKey={(invite) => invite.id}
            columns={[
              { id: 'email', label: 'Email', fixed: true, cell: (invite) => invite.email, title: (invite) => invite.email },
              { id: 'role', label: 'Role', cell: (invite) => invite.role },
              { id: 'createdAt', label: 'Invited', cell: (invite) => <Time value={invite.createdAt} /> },
              { id: 'expiresAt', label: 'Expires', cell: (invite) => <Time value={invite.expiresAt} /> },
              {
                ...ACTIONS_COLUMN,
                                cell: (invite) => (
                  <button type="button" className="quiet-danger" onClick={() => setRevoking(invite)} aria-label={`Revoke the invite for ${invite.email}`}>
                    Revoke
                  </button>
                ),
              },
            ]}
          />
        </>
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
