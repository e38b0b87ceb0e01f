import { useState } from 'react';
import { api, loadAll } from '../../api.js';
import { useTitle } from '../../router.js';
import { useSession } from '../../session.js';
import { ConfirmDialog } from '../../ui/ConfirmDialog.js';
import { ACTIONS_COLUMN, DataTable } from '../../ui/DataTable.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { useForm } from '../../ui/Form.js';
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
  // Changes made from the table (a role picked, a member removed): one error and one notice for them all.
  const changes = useForm();

  const changeRole = async (member: Member, role: string) => {
    await api('PATCH', `/v1/members/${member.personId}`, { role });
    await members.reload();
    // Changing one's own role changes what this dashboard offers.
    if (member.personId === session.person.id) await session.refresh();
    return `${member.name} is now ${/^[aeiou]/.test(role) ? 'an' : 'a'} ${role}.`;
  };

  // The dialog shows a failed removal; the table's notice says it is done.
  const remove = async () => {
    if (!removing) return;
    await api('DELETE', `/v1/members/${removing.personId}`);
    setRemoving(null);
    await changes.run(async () => {
      await members.reload();
      return `${removing.name} was removed from ${session.workspace.name}.`;
    });
  };

  return (
    <section>
      <h1>People</h1>
      <p className="muted">Members of {session.workspace.name} and their roles. Owners and admins manage members, keys, webhooks and indexes; editors change data; viewers read it.</p>
      <ErrorText error={members.error ?? changes.error} />
      <p role="status" className="status-line">
        {changes.notice}
      </p>
      <div className="panel">
        <h2>Members</h2>
        {members.loading && !members.data ? <p role="status">Loading members…</p> : null}
        {members.data ? (
          <DataTable<Member>
            caption={`Members of ${session.workspace.name}`}
            rows={members.data}
            rowKey={(member) => member.personId}
            columns={[
              {
                id: 'name',
                label: 'Name',
                fixed: true,
                cell: (member) => (
                  <>
                    {member.name}
                    {member.personId === session.person.id ? (
                      <>
                        {' '}
                        <span className="badge">you</span>
                      </>
                    ) : null}
                  </>
                ),
                title: (member) => member.name,
              },
              { id: 'email', label: 'Email', cell: (member) => member.email, title: (member) => member.email },
              {
                id: 'role',
                label: 'Role',
                cell: (member) =>
                  manage && member.role !== 'owner' ? (
                    <select
                      aria-label={`Role of ${member.name}`}
                      value={member.role}
                      // One change at a time: every picker waits for the answer.
                      disabled={changes.busy}
                      onChange={(event) => {
                        const role = event.target.value;
                        void changes.run(() => changeRole(member, role));
                      }}
                    >
                      {ASSIGNABLE_ROLES.map((role) => (
                        <option key={role} value={role}>
                          {role}
                        </option>
                      ))}
                    </select>
                  ) : (
                    member.role
                  ),
              },
              { id: 'joinedAt', label: 'Joined', cell: (member) => <Time value={member.joinedAt} /> },
              ...(manage
                ? [
                    {
                      ...ACTIONS_COLUMN,
                                            cell: (member: Member) =>
                        member.role !== 'owner' ? (
                          <button type="button" className="quiet-danger" onClick={() => setRemoving(member)} aria-label={`Remove ${member.name}`}>
                            Remove
                          </button>
                        ) : null,
                    },
                  ]
                : []),
            ]}
          />
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
