import { useEffect, useState, type FormEvent } from 'react';
import { api } from '../../api.js';
import { navigate, useRoute, useTitle } from '../../router.js';
import type { SessionBody } from '../../api-types.js';
import { useAuth } from '../../session.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { Field } from '../../ui/Field.js';
import { FormActions } from '../../ui/FormActions.js';
import { safeNext } from './safeNext.js';

export function SignInPage(): React.JSX.Element {
  useTitle('Sign in');
  const { state, signedIn } = useAuth();
  const { query } = useRoute();
  const next = safeNext(query.get('next'));
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [setupPending, setSetupPending] = useState(false);

  useEffect(() => {
    if (state.status === 'signed-in') navigate(next, { replace: true });
  }, [state.status, next]);

  useEffect(() => {
    api<{ pending: boolean }>('GET', '/v1/auth/setup').then((answer) => setSetupPending(answer.pending), () => undefined);
  }, []);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      signedIn(await api<SessionBody>('POST', '/v1/auth/sign-in', { email, password }));
      navigate(next, { replace: true });
    } catch (caught) {
      setError(caught);
      setBusy(false);
    }
  };

  return (
    <div className="card">
      <p className="brand-title">Plainbase</p>
      <h1>Sign in</h1>
      {setupPending ? (
        <p className="notice" role="note">
          Nobody has an account yet. Open the one-time setup link the server printed when it started to create the owner.
        </p>
      ) : null}
      <form onSubmit={(event) => void submit(event)} noValidate>
        <Field label="Email">
          <input type="email" autoComplete="username" required value={email} onChange={(event) => setEmail(event.target.value)} />
        </Field>
        <Field label="Password">
          <input type="password" autoComplete="current-password" required value={password} onChange={(event) => setPassword(event.target.value)} />
        </Field>
        <ErrorText error={error} />
        <FormActions label="Sign in" busyLabel="Signing in…" busy={busy} />
      </form>
      <p className="muted">No account? Ask an owner or admin of your workspace for an invite link.</p>
    </div>
  );
}
