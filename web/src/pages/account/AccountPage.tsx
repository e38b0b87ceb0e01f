import { useState, type FormEvent } from 'react';
import { api, fieldError } from '../../api.js';
import { useTitle } from '../../router.js';
import { useAuth } from '../../session.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { Field } from '../../ui/Field.js';
import { FormActions } from '../../ui/FormActions.js';
import { PASSWORD_HINT } from '../auth/password-hint.js';

/**
 * The signed-in person's own account: who they are, and changing their password. The service
 * asks for the current password and ends every other session of theirs (docs/security.md); the
 * rules of a new password are the service's own, shown here as its error for the field.
 */
export function AccountPage(): React.JSX.Element {
  useTitle('Your account');
  const { state } = useAuth();
  const [currentPassword, setCurrentPassword] = useState('');
  const [newPassword, setNewPassword] = useState('');
  const [repeated, setRepeated] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState(false);
  if (state.status !== 'signed-in') return <></>;

  const mismatch = repeated !== '' && repeated !== newPassword;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (mismatch) return;
    setBusy(true);
    setError(null);
    setDone(false);
    try {
      await api('POST', '/v1/auth/password', { currentPassword, newPassword });
      setCurrentPassword('');
      setNewPassword('');
      setRepeated('');
      setDone(true);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  const currentError = fieldError(error, 'currentPassword');
  const newError = fieldError(error, 'newPassword');
  return (
    <section>
      <h1>Your account</h1>
      <p>
        Signed in as <strong>{state.person.name}</strong> ({state.person.email}).
      </p>
      <form className="panel stack" onSubmit={(event) => void submit(event)} noValidate aria-labelledby="change-password">
        <h2 id="change-password">Change password</h2>
        <p className="hint">{PASSWORD_HINT} Changing it signs you out everywhere else.</p>
        <Field label="Current password" error={currentError}>
          <input type="password" autoComplete="current-password" required value={currentPassword} onChange={(event) => setCurrentPassword(event.target.value)} />
        </Field>
        <Field label="New password" error={newError}>
          <input type="password" autoComplete="new-password" required value={newPassword} onChange={(event) => setNewPassword(event.target.value)} />
        </Field>
        <Field label="New password again" error={mismatch ? 'The two new passwords differ.' : undefined}>
          <input type="password" autoComplete="new-password" required value={repeated} onChange={(event) => setRepeated(event.target.value)} />
        </Field>
        {currentError || newError ? null : <ErrorText error={error} />}
        {done ? (
          <p role="status" className="notice">
            Your password is changed. Every other session of yours is signed out; this one goes on.
          </p>
        ) : null}
        <FormActions label="Change password" busyLabel="Changing…" busy={busy} disabled={!currentPassword || !newPassword || repeated !== newPassword} />
      </form>
    </section>
  );
}
