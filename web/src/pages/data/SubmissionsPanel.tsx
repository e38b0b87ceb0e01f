import { useEffect, useState } from 'react';
import { api, fieldErrorsWithin } from '../../api.js';
import { useSession } from '../../session.js';
import { Field } from '../../ui/Field.js';
import { Form, useForm } from '../../ui/Form.js';
import type { Collection, SubmissionSettings, SubmissionSettingsInput } from '../../api-types.js';
import { collectionPath } from './collection-paths.js';
import { formFields } from './schema-form.js';
import { ANY_ORIGIN, originsOfText, originsProblems } from './submission-origins.js';
import type { CaptchaProvider } from './submission-snippets.js';

/** A collection's public submissions setting, or the one it has before anybody turned them on. */
export function submissionsOf(collection: Collection): SubmissionSettings {
  return collection.settings.submissions ?? { enabled: false, origins: [] };
}

const PROVIDERS: Record<CaptchaProvider, string> = { turnstile: 'Cloudflare Turnstile', hcaptcha: 'hCaptcha' };
const FIELD = 'settings.submissions';

/**
 * The "Submissions" settings of a collection: whether web pages may post records to it without a
 * key, from which sites, how often per visitor, and the bot checks (a honeypot field, a CAPTCHA).
 * The CAPTCHA's secret is write-only: the API says only that one is set, so the form offers to
 * replace it, and choosing no provider removes it. Viewers see it all, disabled.
 */
export function SubmissionsPanel(props: { collection: Collection; schema: unknown; canUpdate: boolean; onSaved: () => Promise<void> }): React.JSX.Element {
  const session = useSession();
  const stored = submissionsOf(props.collection);
  const [enabled, setEnabled] = useState(false);
  const [originsText, setOriginsText] = useState('');
  const [rate, setRate] = useState('');
  const [honeypot, setHoneypot] = useState('');
  const [provider, setProvider] = useState<CaptchaProvider | ''>('');
  const [secret, setSecret] = useState('');
  const [replacingSecret, setReplacingSecret] = useState(false);
  const [problem, setProblem] = useState<{ field: 'origins' | 'rate' | 'honeypot' | 'secret'; text: string } | null>(null);

  useEffect(() => {
    const current = submissionsOf(props.collection);
    setEnabled(current.enabled);
    setOriginsText(current.origins.join('\n'));
    setRate(current.ratePerMinute === undefined ? '' : String(current.ratePerMinute));
    setHoneypot(current.honeypot ?? '');
    setProvider(current.captcha?.provider ?? '');
    setSecret('');
    setReplacingSecret(false);
  }, [props.collection]);

  const origins = originsOfText(originsText);
  const storedProvider = stored.captcha?.provider ?? null;
  // A stored secret belongs to its provider: another provider needs its own.
  const secretIsSet = storedProvider !== null && storedProvider === provider;
  const askSecret = provider !== '' && (!secretIsSet || replacingSecret);

  /** What the form would send, or what must be fixed first (checked here so nothing half-right is sent). */
  function submissionsToSend(): SubmissionSettingsInput | { problem: NonNullable<typeof problem> } {
    const originProblems = originsProblems(origins);
    if (originProblems.length) return { problem: { field: 'origins', text: originProblems.join(' ') } };
    const ratePerMinute = rate.trim() === '' ? undefined : Number(rate);
    if (ratePerMinute !== undefined && !(Number.isInteger(ratePerMinute) && ratePerMinute >= 1)) {
      return { problem: { field: 'rate', text: 'Write a whole number of submissions, 1 or more (or leave it empty for 10).' } };
    }
    // The honeypot's value is dropped and a filled one drops the whole submission: a real field of the form must not be it.
    if (honeypot.trim() && (formFields(props.schema) ?? []).some((field) => field.name === honeypot.trim())) {
      return { problem: { field: 'honeypot', text: `${honeypot.trim()} is a field of the active schema: people fill it in, so their submissions would be dropped. Choose a name the schema does not use.` } };
    }
    if (askSecret && secret.trim() === '') return { problem: { field: 'secret', text: `Paste the secret key of your ${PROVIDERS[provider as CaptchaProvider]} site.` } };
    const captcha = provider === '' ? (storedProvider ? null : undefined) : askSecret ? { provider, secret: secret.trim() } : { provider };
    return {
      enabled,
      origins,
      ...(ratePerMinute === undefined ? {} : { ratePerMinute }),
      ...(honeypot.trim() ? { honeypot: honeypot.trim() } : {}),
      ...(captcha === undefined ? {} : { captcha }),
    };
  }

  const form = useForm(async () => {
    const submissions = submissionsToSend();
    if ('problem' in submissions) {
      setProblem(submissions.problem);
      return;
    }
    setProblem(null);
    await api<Collection>('PATCH', collectionPath(props.collection.name), { settings: { submissions } });
    // The notice waits for the collection to be read again: that read resets the form, and would undo a choice made in between.
    await props.onSaved();
    return 'Submission settings saved.';
  });

  const errorOf = (field: 'origins' | 'rate' | 'honeypot' | 'secret', apiField: string) =>
    [problem?.field === field ? problem.text : '', ...fieldErrorsWithin(form.error, `${FIELD}.${apiField}`)].filter(Boolean).join(' ') || undefined;
  const disabled = !props.canUpdate;

  return (
    <Form
      form={form}
      title="Submissions"
      titleId="submissions-title"
      submitLabel="Save submission settings"
      busyLabel="Saving…"
      readOnlyNote={props.canUpdate ? undefined : `Your role (${session.workspace.role}) can read these settings but not change them.`}
    >
      <p className="hint">
        Let web pages post records to this collection without a key: a form on your site, or a script on it. Only the sites listed below may post, and
        nothing else of the collection opens to them. The documentation's <code>docs/forms.md</code> tells the whole story.
      </p>
      <label className="check">
        <input type="checkbox" role="switch" checked={enabled} onChange={(event) => setEnabled(event.target.checked)} disabled={disabled} />
        Accept submissions from web pages
      </label>
      <Field
        label="Allowed origins"
        hint="One a line, as browsers send it: https://example.com, or with its port, http://localhost:3000. * allows any site."
        error={errorOf('origins', 'origins')}
      >
        <textarea value={originsText} onChange={(event) => setOriginsText(event.target.value)} rows={3} disabled={disabled} spellCheck={false} placeholder="https://example.com" />
      </Field>
      {origins.includes(ANY_ORIGIN) ? (
        <p className="warning-box" role="note">
          <strong>* lets any web site post to this collection</strong>, including sites made to flood it. Keep the rate limit low and add a CAPTCHA, or list
          your own sites instead.
        </p>
      ) : null}
      {enabled && origins.length === 0 ? <p className="hint">No site can post until you list one.</p> : null}
      <Field label="Submissions per minute, per visitor" hint="Counted per visitor's address; empty means 10." error={errorOf('rate', 'ratePerMinute')}>
        <input type="number" min={1} step={1} inputMode="numeric" value={rate} onChange={(event) => setRate(event.target.value)} disabled={disabled} placeholder="10" />
      </Field>
      <Field
        label="Honeypot field (optional)"
        hint="The name of a hidden field people never see and bots fill in (letters, digits, _ and -); a submission with it filled in is answered as accepted, and not kept. Empty: none."
        error={errorOf('honeypot', 'honeypot')}
      >
        <input value={honeypot} onChange={(event) => setHoneypot(event.target.value)} disabled={disabled} spellCheck={false} autoComplete="off" placeholder="website" />
      </Field>
      <Field label="CAPTCHA" hint="Each submission must then carry a token the provider's widget gives the visitor. None removes it, with its secret." error={fieldErrorsWithin(form.error, `${FIELD}.captcha.provider`).join(' ') || undefined}>
        <select value={provider} onChange={(event) => setProvider(event.target.value as CaptchaProvider | '')} disabled={disabled}>
          <option value="">None</option>
          {Object.entries(PROVIDERS).map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      </Field>
      {provider !== '' && secretIsSet && !replacingSecret ? (
        <div className="secret-state">
          <p>
            <strong>CAPTCHA secret: set.</strong> It is kept by the service and never shown again.
          </p>
          {props.canUpdate ? (
            <button type="button" onClick={() => setReplacingSecret(true)}>
              Replace secret
            </button>
          ) : null}
        </div>
      ) : null}
      {askSecret ? (
        <Field label="CAPTCHA secret key" hint={`From your ${PROVIDERS[provider as CaptchaProvider]} account. It is never shown again once saved.`} error={errorOf('secret', 'captcha')}>
          <input type="password" value={secret} onChange={(event) => setSecret(event.target.value)} disabled={disabled} autoComplete="off" spellCheck={false} />
        </Field>
      ) : null}
      {storedProvider !== null && provider === '' ? <p className="hint">Saving removes the CAPTCHA and its secret.</p> : null}
    </Form>
  );
}
