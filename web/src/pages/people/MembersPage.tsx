import { useState } from 'react';
import { api, loadAll } from '../../api.js';
import { useTitle } from '../../router.js';
import { useSession } from '../../session.js';
import { ConfirmDialog } from '../../ui/ConfirmDialog.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { Time } from '../../ui/Time.js';
import { useApiQuery } from '../../query/useApiQuery.js';
import { InvitesPanel } from './InvitesPanel.js';
import { TransferOwnership } from './TransferOwnership.js';
import type { Member } from '../../api-types.js';
import { ASSIGNABLE_ROLES } from './roles.js';
import { newestFirst } from '../../ui/newest-first.js';

/** People: who is in the workspace with which role; owners and admins manage them and invites. */
export function MembersPage(): React.JSX.Element {
  useTitle('People');
  const session = useSession();
  const manage = session.can('members:manage');
  const members = useApiQuery(['/v1/members'], async (signal) => newestFirst(await loadAll<Member>('/v1/members', signal), (member) => member.joinedAt));
  const [removing, setRemoving] = useState<Member | null>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  const [status, setStatus] = useState('');
  /** The member whose role is being changed: their picker waits for the answer. */
  const [changing, setChanging] = useState<string | null>(null);

  const changeRole = async (member: Member, role: string) => {
    setActionError(null);
    setStatus('');
    setChanging(member.personId);
    try {
      await api('PATCH', `/v1/members/${member.personId}`, { role });
      await members.reload();
      setStatus(`${member.name} is now ${/^[aeiou]/.test(role) ? 'an' : 'a'} ${role}.`);
      // Changing one's own role changes what this dashboard offers.
      if (member.personId === session.person.id) await session.refresh();
    } catch (error) {
      setActionError(error);
    } finally {
      setChanging(null);
    }
  };

  const remove = async () => {
    if (!removing) return;
    await api('DELETE', `/v1/members/${removing.personId}`);
    setRemoving(null);
    await members.reload();
    setStatus(`${removing.name} was removed from ${session.workspace.name}.`);
  };

  return (
    <section>
      <h1>People</h1>
      <p className="muted">Members of {session.workspace.name} and their roles. Owners and admins manage members, keys, webhooks and indexes; editors change data; viewers read it.</p>
      <ErrorText error={members.error ?? actionError} />
      <p role="status" className="status-line">
        {status}
      </p>
      <div className="panel">
        <h2>Members</h2>
        {members.loading && !members.data ? <p role="status">Loading members…</p> : null}
        {members.data ? (
          <div className="table-wrap" tabIndex={0} role="region" aria-label="Members">
            <table>
              <caption className="visually-hidden">Members of {session.workspace.name}</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Email</th>
                  <th scope="col">Role</th>
                  <th scope="col">Joined</th>
                  {manage ? <th scope="col"><span className="visually-hidden">Actions</span></th> : null}
                </tr>
              </thead>
              <tbody>
                {members.data.map((member) => (
                  <tr key={member.personId}>
                    <td>
                      {member.name}
                      {member.personId === session.person.id ? <span className="badge">you</span> : null}
                    </td>
                    <td>{member.email}</td>
                    <td>
                      {manage && member.role !== 'owner' ? (
                        <select aria-label={`Role of ${member.name}`} value={member.role} disabled={changing === member.personId} onChange={(event) => void changeRole(member, event.target.value)}>
                          {ASSIGNABLE_ROLES.map((role) => (
                            <option key={role} value={role}>
                              {role}
                            </option>
                          ))}
                        </select>
                      ) : (
                        member.role
                      )}
                    </td>
                    <td><Time value={member.joinedAt} /></td>
                    {manage ? (
                      <td>
                        {member.role !== 'owner' ? (
                          <button type="button" className="quiet-danger" onClick={() => setRemoving(member)} aria-label={`Remove ${member.name}`}>
                            Remove
                          </button>
                        ) : null}
                      </td>
                    ) : null}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
      </div>

      {manage ? <InvitesPanel onAccepted={() => void members.reload()} /> : null}
      {session.can('workspace:transfer') && members.data ? <TransferOwnership members={members.data} onTransferred={members.reload} /> : null}

      <ConfirmDialog
        open={removing !== null}
        title={`Remove ${removing?.name ?? ''}?`}
        message={
          <p>
            {removing?.name} ({removing?.email}) will lose access to {session.workspace.name} at once, and the API keys they created here stop working. To let
            them back in, invite them again.
          </p>
        }
        confirmLabel="Remove member"
        danger
        onConfirm={remove}
        onCancel={() => setRemoving(null)}
      />
    </section>
  );
}
