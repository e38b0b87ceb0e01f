import { useEffect, useState } from 'react';
import { api, fieldError } from '../../api.js';
import { Link, navigate, useRoute, useTitle } from '../../router.js';
import type { SessionBody } from '../../api-types.js';
import { useAuth } from '../../session.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { Field } from '../../ui/Field.js';
import { Form, useForm } from '../../ui/Form.js';
import { PASSWORD_HINT } from './password-hint.js';

/** First run: the link the server printed at start opens this page, which creates the owner. */
export function SetupPage(): React.JSX.Element {
  useTitle('Set up Plainbase');
  const { signedIn } = useAuth();
  const token = useRoute().query.get('token') ?? '';
  const [pending, setPending] = useState<boolean | null>(null);
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  // Whether setup is still to be done could not be read: said apart from the form's own error.
  const [readError, setReadError] = useState<unknown>(null);
  const mismatch = repeat !== '' && repeat !== password ? 'The two passwords differ.' : undefined;
  const form = useForm(async () => {
    if (password !== repeat) return;
    signedIn(await api<SessionBody>('POST', '/v1/auth/setup', { token, name, email, password }));
    navigate('/', { replace: true });
  });
  const error = form.error;

  useEffect(() => {
    api<{ pending: boolean }>('GET', '/v1/auth/setup').then((answer) => setPending(answer.pending), setReadError);
  }, []);

  if (pending === false) {
    return (
      <div className="card">
        <p className="brand-title">Plainbase</p>
        <h1>Setup is done</h1>
        <p>This service already has an owner. </p>
        <p>
          <Link to="/sign-in">Sign in</Link>
        </p>
      </div>
    );
  }

  return (
    <div className="card">
      <p className="brand-title">Plainbase</p>
      <h1>Create the owner account</h1>
      {token === '' ? (
        <p className="error" role="alert">
          This page needs the one-time link the server printed when it started (it ends in <code>/setup?token=…</code>). Restart the server to get a fresh
          one.
        </p>
      ) : (
        <p>You will own this Plainbase and its first workspace. You can invite others afterwards.</p>
      )}
      <ErrorText error={readError} />
      <Form form={form} label="Create the owner account" className="" submitLabel="Create owner" busyLabel="Creating…" disabled={token === '' || pending === null}>
        <Field label="Your name" error={fieldError(error, 'name')}>
          <input autoComplete="name" required value={name} onChange={(event) => setName(event.target.value)} />
        </Field>
        <Field label="Email" error={fieldError(error, 'email')}>
          <input type="email" autoComplete="username" required value={email} onChange={(event) => setEmail(event.target.value)} />
        </Field>
        <Field label="Password" hint={PASSWORD_HINT} error={fieldError(error, 'password')}>
          <input type="password" autoComplete="new-password" required minLength={10} value={password} onChange={(event) => setPassword(event.target.value)} />
        </Field>
        <Field label="Repeat the password" error={mismatch}>
          <input type="password" autoComplete="new-password" required value={repeat} onChange={(event) => setRepeat(event.target.value)} />
        </Field>
      </Form>
    </div>
  );
}
