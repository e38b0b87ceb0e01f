import { useState } from 'react';
import { SCOPES } from '../../../../src/abilities.js';
import { api, fieldError } from '../../api.js';
import { Field } from '../../ui/Field.js';
import { Form, useForm } from '../../ui/Form.js';
import { Checklist } from './Checklist.js';
import type { ApiKeyWithSecret, CollectionRef } from '../../api-types.js';
import { SCOPE_WORDS } from './scope-words.js';

/**
 * The form that makes a key. Only the scopes `grantable` allows are offered (the person's role, and
 * for a service account its role too), so the API's 403 for a scope beyond them never comes up.
 */
export function CreateKeyForm(props: {
  grantable: (scope: string) => boolean;
  collections: CollectionRef[];
  serviceAccount?: { id: string; name: string };
  onCreated: (key: ApiKeyWithSecret) => void;
  onCancel: () => void;
}): React.JSX.Element {
  const offered = SCOPES.filter((scope) => props.grantable(scope));
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Set<string>>(() => new Set(offered.filter((scope) => scope.endsWith(':read'))));
  const [restrict, setRestrict] = useState(false);
  const [chosenCollections, setChosenCollections] = useState<Set<string>>(new Set());
  const [expiresAt, setExpiresAt] = useState('');
  const [mode, setMode] = useState<'live' | 'test'>('live');
  const form = useForm(async () => {
    // What the API would refuse anyway, said before asking it.
    if (scopes.size === 0) throw new Error('Choose at least one scope.');
    if (restrict && chosenCollections.size === 0) throw new Error('Choose at least one collection, or allow all collections.');
    let expiry: string | undefined;
    if (expiresAt) {
      const when = new Date(expiresAt);
      if (Number.isNaN(when.getTime())) throw new Error('The expiry is not a valid date and time.');
      if (when.getTime() <= Date.now()) throw new Error('The expiry must be in the future.');
      expiry = when.toISOString();
    }
    const key = await api<ApiKeyWithSecret>('POST', '/v1/keys', {
      name: name.trim(),
      // In the order of the scope table, so the list reads the same way everywhere.
      scopes: SCOPES.filter((scope) => scopes.has(scope)),
      mode,
      ...(restrict ? { collections: [...chosenCollections] } : {}),
      ...(expiry ? { expiresAt: expiry } : {}),
      ...(props.serviceAccount ? { serviceAccountId: props.serviceAccount.id } : {}),
    });
    props.onCreated(key);
  });
  const error = form.error;

  const title = props.serviceAccount ? `New key for ${props.serviceAccount.name}` : 'New API key';
  return (
    <Form form={form} title={title} submitLabel="Create key" busyLabel="Creating…" onCancel={props.onCancel}>
      <Field label="Name" hint="What the key is for, like “CI” or “website form”." error={fieldError(error, 'name')}>
        <input value={name} onChange={(event) => setName(event.target.value)} required maxLength={200} autoFocus />
      </Field>

      <fieldset>
        <legend>Scopes</legend>
        <p className="hint">
          {props.serviceAccount
            ? 'Only what both your role and the service account’s role allow is offered.'
            : 'Only what your role allows is offered. The key keeps following your role: if it shrinks, so does the key.'}
        </p>
        <Checklist
          options={offered.map((scope) => ({
            value: scope,
            label: (
              <>
                <code>{scope}</code> <span className="hint">{SCOPE_WORDS[scope]}</span>
              </>
            ),
          }))}
          chosen={scopes}
          onChange={setScopes}
        />
      </fieldset>

      <fieldset>
        <legend>Collections</legend>
        <label className="choice">
          <input type="radio" name="key-collections" checked={!restrict} onChange={() => setRestrict(false)} /> All collections, also ones made later
        </label>
        <label className="choice">
          <input type="radio" name="key-collections" checked={restrict} onChange={() => setRestrict(true)} disabled={props.collections.length === 0} /> Only the collections chosen
          below
        </label>
        {props.collections.length === 0 ? <p className="hint">There are no collections yet to restrict the key to.</p> : null}
        {restrict ? (
          <Checklist
            label="Collections the key may reach"
            options={props.collections.map((collection) => ({ value: collection.id, label: collection.name }))}
            chosen={chosenCollections}
            onChange={setChosenCollections}
          />
        ) : null}
      </fieldset>

      <Field label="Expires (optional)" hint="In your local time. Leave empty for a key that works until it is revoked." error={fieldError(error, 'expiresAt')}>
        <input type="datetime-local" value={expiresAt} onChange={(event) => setExpiresAt(event.target.value)} />
      </Field>

      <fieldset>
        <legend>Mode</legend>
        <label className="choice">
          <input type="radio" name="key-mode" checked={mode === 'live'} onChange={() => setMode('live')} /> Live (<code>pb_live_…</code>)
        </label>
        <label className="choice">
          <input type="radio" name="key-mode" checked={mode === 'test'} onChange={() => setMode('test')} /> Test (<code>pb_test_…</code>): a label for tests and
          staging; it acts on the same data
        </label>
      </fieldset>

    </Form>
  );
}
