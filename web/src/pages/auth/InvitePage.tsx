import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, ApiError, fieldError } from '../../api.js';
import { navigate, useRoute, useTitle } from '../../router.js';
import type { InvitePreview, SessionBody } from '../../api-types.js';
import { useAuth } from '../../session.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { Field } from '../../ui/Field.js';
import { Form, useForm } from '../../ui/Form.js';
import { Time } from '../../ui/Time.js';
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
  // Read without a session (the token is the credential), so outside the workspace's cache keys.
  const preview = useQuery({
    queryKey: ['invite', token],
    queryFn: ({ signal }) => api<InvitePreview>('GET', `/v1/invites/${encodeURIComponent(token)}/accept`, undefined, signal),
    retry: false,
  });

  const form = useForm(async () => {
    try {
      signedIn(await api<SessionBody>('POST', `/v1/invites/${encodeURIComponent(token)}/accept`, mode === 'new' ? { name, password } : { password }));
      navigate('/', { replace: true });
    } catch (caught) {
      // The invited email already has an account: switch to asking for its password.
      if (caught instanceof ApiError && caught.status === 401 && mode === 'new') setMode('existing');
      throw caught;
    }
  });
  const error = form.error;

  return (
    <div className="card">
      <p className="brand-title">Plainbase</p>
      <h1>You are invited</h1>
      <InviteSummary preview={preview.data} error={preview.error} loading={preview.isPending} />
      {preview.isError ? null : (
        <Form form={form} label="Accept the invite" className="" submitLabel="Accept invite" busyLabel="Joining…">
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
        </Form>
      )}
    </div>
  );
}

/** Who invited whom to which workspace, or why the link no longer works. */
function InviteSummary({ preview, error, loading }: { preview: InvitePreview | undefined; error: unknown; loading: boolean }): React.JSX.Element {
  if (loading) return <p>Reading the invite…</p>;
  if (!preview) return <ErrorText error={error} />;
  const inviter = preview.inviterName ?? 'Someone';
  return (
    <>
      <p className="invite-summary">
        {inviter} invited you to <strong>{preview.workspaceName}</strong> as {/^[aeiou]/.test(preview.role) ? 'an' : 'a'} <strong>{preview.role}</strong>.
      </p>
      <p>
        The invite is for {preview.email}, and works until <Time value={preview.expiresAt} />.
      </p>
    </>
  );
}
