import { useState } from 'react';
import { api } from '../../api.js';
import { useSession } from '../../session.js';
import { ConfirmDialog } from '../../ui/ConfirmDialog.js';
import { Field } from '../../ui/Field.js';
import type { Member } from '../../api-types.js';

/** The owner hands the workspace to another member and becomes an admin. */
export function TransferOwnership(props: { members: Member[]; onTransferred: () => Promise<void> }): React.JSX.Element {
  const session = useSession();
  const candidates = props.members.filter((member) => member.personId !== session.person.id);
  const [target, setTarget] = useState('');
  const [confirming, setConfirming] = useState(false);
  const chosen = candidates.find((member) => member.personId === target);

  const transfer = async () => {
    await api('POST', '/v1/workspace/transfer-ownership', { personId: target });
    setConfirming(false);
    await props.onTransferred();
    // The role changed: what the dashboard offers changes with it.
    await session.refresh();
  };

  return (
    <div className="panel">
      <h2>Transfer ownership</h2>
      {candidates.length === 0 ? (
        <p className="muted">Invite someone first: ownership can only go to another member.</p>
      ) : (
        <div className="inline-form">
          <Field label="New owner">
            <select value={target} onChange={(event) => setTarget(event.target.value)}>
              <option value="">Choose a member…</option>
              {candidates.map((member) => (
                <option key={member.personId} value={member.personId}>
                  {member.name} ({member.email})
                </option>
              ))}
            </select>
          </Field>
          <button type="button" className="quiet-danger" disabled={!chosen} onClick={() => setConfirming(true)}>
            Transfer ownership…
          </button>
        </div>
      )}
      <ConfirmDialog
        open={confirming}
        title={`Make ${chosen?.name ?? ''} the owner?`}
        message={
          <p>
            {chosen?.name} will own {session.workspace.name}. You become an admin: you can no longer transfer the workspace, and only the new owner can give it
            back.
          </p>
        }
        confirmLabel="Transfer ownership"
        danger
        onConfirm={transfer}
        onCancel={() => setConfirming(false)}
      />
    </div>
  );
}
