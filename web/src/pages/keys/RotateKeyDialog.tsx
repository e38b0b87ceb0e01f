import { useState } from 'react';
import { api } from '../../api.js';
import { ConfirmDialog } from '../../ui/ConfirmDialog.js';
import { Field } from '../../ui/Field.js';
import type { ApiKey, ApiKeyWithSecret } from '../../api-types.js';

const HOUR = 3600;
const DAY = 24 * HOUR;

/** Grace periods on offer: none up to the API's most, 7 days (docs/api-keys.md "Rotation"). */
const GRACE_CHOICES: { seconds: number; label: string }[] = [
  { seconds: 0, label: 'None: the old secret stops now' },
  { seconds: HOUR, label: '1 hour' },
  { seconds: DAY, label: '1 day' },
  { seconds: 2 * DAY, label: '2 days' },
  { seconds: 3 * DAY, label: '3 days' },
  { seconds: 7 * DAY, label: '7 days' },
];

/** Asks how long the old secret may keep working, then rotates; the new secret goes to `onRotated`. */
export function RotateKeyDialog(props: { apiKey: ApiKey | null; onRotated: (key: ApiKeyWithSecret) => void; onCancel: () => void }): React.JSX.Element {
  const [grace, setGrace] = useState(DAY);
  const key = props.apiKey;
  return (
    <ConfirmDialog
      open={key !== null}
      title={key ? `Rotate the key “${key.name}”?` : 'Rotate key?'}
      confirmLabel="Rotate key"
      message={
        <>
          <p>
            The key gets a new secret; its name, scopes, collections and expiry stay. During the grace period both the old and the new secret work, so you
            can deploy the new one without downtime.
          </p>
          <Field label="Old secret keeps working for" hint="Never past the key’s own expiry. If the key leaked, revoke it instead: a grace period keeps the leaked secret alive.">
            <select value={grace} onChange={(event) => setGrace(Number(event.target.value))}>
              {GRACE_CHOICES.map((choice) => (
                <option key={choice.seconds} value={choice.seconds}>
                  {choice.label}
                </option>
              ))}
            </select>
          </Field>
        </>
      }
      onConfirm={async () => {
        if (!key) return;
        const rotated = await api<ApiKeyWithSecret>('POST', `/v1/keys/${key.id}/rotate`, { gracePeriodSeconds: grace });
        props.onRotated(rotated);
      }}
      onCancel={props.onCancel}
    />
  );
}
