import { useEffect, useState } from 'react';
import { api } from '../../api.js';
import { navigate, useRoute, useTitle } from '../../router.js';
import type { SessionBody } from '../../api-types.js';
import { useAuth } from '../../session.js';
import { Field } from '../../ui/Field.js';
import { Form, useForm } from '../../ui/Form.js';
import { safeNext } from './safeNext.js';

export function SignInPage(): React.JSX.Element {
  useTitle('Sign in');
  const { state, signedIn } = useAuth();
  const { query } = useRoute();
  const next = safeNext(query.get('next'));
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [setupPending, setSetupPending] = useState(false);
  const form = useForm(async () => {
    signedIn(await api<SessionBody>('POST', '/v1/auth/sign-in', { email, password }));
    navigate(next, { replace: true });
  });

  useEffect(() => {
    if (state.status === 'signed-in') navigate(next, { replace: true });
  }, [state.status, next]);

  useEffect(() => {
    api<{ pending: boolean }>('GET', '/v1/auth/setup').then((answer) => setSetupPending(answer.pending), () => undefined);
  }, []);

  return (
    <div className="card">
      <p className="brand-title">Plainbase</p>
      <h1>Sign in</h1>
      {setupPending ? (
        <p className="notice" role="note">
          Nobody has an account yet. Open the one-time setup link the server printed when it started to create the owner.
        </p>
      ) : null}
      {/* The card is the panel already: the form adds no frame of its own. */}
      <Form form={form} label="Sign in" className="" submitLabel="Sign in" busyLabel="Signing in…">
        <Field label="Email">
          <input type="email" autoComplete="username" required value={email} onChange={(event) => setEmail(event.target.value)} />
        </Field>
        <Field label="Password">
          <input type="password" autoComplete="current-password" required value={password} onChange={(event) => setPassword(event.target.value)} />
        </Field>
      </Form>
      <p className="muted">No account? Ask an owner or admin of your workspace for an invite link.</p>
    </div>
  );
}
