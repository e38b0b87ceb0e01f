import { useState, type FormEvent } from 'react';
import { api, ApiError, fieldError } from '../../api.js';
import { navigate, useRoute, useTitle } from '../../router.js';
import type { SessionBody } from '../../api-types.js';
import { useAuth } from '../../session.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { Field } from '../../ui/Field.js';
import { FormActions } from '../../ui/FormActions.js';
import { PASSWORD_HINT } from './password-hint.js';

/**
 * The invite link (`/invite/<token>`): someone new chooses a name and password; someone with an
 * account already gives its password. The service knows which from the invited email.
 */
export function InvitePage(): React.JSX.Element {
  useTitle('Accept an invite');
  const { signedIn } = useAuth();
  const token = useRoute().params.token ?? '';
  const [mode, setMode] = useState<'new' | 'existing'>('new');
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body = await api<SessionBody>('POST', `/v1/invites/${encodeURIComponent(token)}/accept`, mode === 'new' ? { name, password } : { password });
      signedIn(body);
      navigate('/', { replace: true });
    } catch (caught) {
      // The invited email already has an account: switch to asking for its password.
      if (caught instanceof ApiError && caught.status === 401 && mode === 'new') setMode('existing');
      setError(caught);
      setBusy(false);
    }
  };

  return (
    <div className="card">
      <p className="brand-title">Plainbase</p>
      <h1>You are invited</h1>
      <p>Accept to join the workspace you were invited to.</p>
      <form onSubmit={(event) => void submit(event)} noValidate>
        <fieldset className="choice">
          <legend>Do you have a Plainbase account with the invited email?</legend>
          <label>
            <input type="radio" name="mode" checked={mode === 'new'} onChange={() => setMode('new')} /> No, I am new here
          </label>
          <label>
            <input type="radio" name="mode" checked={mode === 'existing'} onChange={() => setMode('existing')} /> Yes, I already have an account
          </label>
        </fieldset>
        {mode === 'new' ? (
          <Field label="Your name" error={fieldError(error, 'name')}>
            <input autoComplete="name" required value={name} onChange={(event) => setName(event.target.value)} />
          </Field>
        ) : null}
        <Field
          label={mode === 'new' ? 'Choose a password' : 'Your password'}
          hint={mode === 'new' ? PASSWORD_HINT : undefined}
          error={fieldError(error, 'password')}
        >
          <input
            type="password"
            autoComplete={mode === 'new' ? 'new-password' : 'current-password'}
            required
            value={password}
            onChange={(event) => setPassword(event.target.value)}
          />
        </Field>
        <ErrorText error={error} />
        <FormActions label="Accept invite" busyLabel="Joining…" busy={busy} />
      </form>
    </div>
  );
}
