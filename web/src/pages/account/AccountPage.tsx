import { useState } from 'react';
import { api, fieldError } from '../../api.js';
import { useTitle } from '../../router.js';
import { useAuth } from '../../session.js';
import { Field } from '../../ui/Field.js';
import { Form, useForm } from '../../ui/Form.js';
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
  const mismatch = repeated !== '' && repeated !== newPassword;
  const form = useForm(async () => {
    if (mismatch) return;
    await api('POST', '/v1/auth/password', { currentPassword, newPassword });
    setCurrentPassword('');
    setNewPassword('');
    setRepeated('');
    return 'Your password is changed. Every other session of yours is signed out; this one goes on.';
  });
  if (state.status !== 'signed-in') return <></>;

  const currentError = fieldError(form.error, 'currentPassword');
  const newError = fieldError(form.error, 'newPassword');
  return (
    <section>
      <h1>Your account</h1>
      <p>
        Signed in as <strong>{state.person.name}</strong> ({state.person.email}).
      </p>
      <Form
        form={form}
        title="Change password"
        titleId="change-password"
        submitLabel="Change password"
        busyLabel="Changing…"
        disabled={!currentPassword || !newPassword || repeated !== newPassword}
        errorInFields={Boolean(currentError || newError)}
      >
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
      </Form>
    </section>
  );
}
