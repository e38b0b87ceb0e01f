import { useState } from 'react';
import { EVENT_TYPES } from '../../../../src/modules/events/event-types.js';
import { fieldError } from '../../api.js';
import { Field } from '../../ui/Field.js';
import { Form, useForm } from '../../ui/Form.js';
import { Checklist } from '../keys/Checklist.js';
import type { CollectionRef } from '../../api-types.js';
import type { WebhookInput } from '../../api-types.js';
import { ALL_EVENTS } from './all-events.js';

/**
 * A webhook's address and what it listens to, for creating one and for changing it. `submit`
 * throws the API's error, which is shown here next to the field it names.
 */
export function WebhookForm(props: {
  title: string;
  submitLabel: string;
  initial?: WebhookInput;
  collections: CollectionRef[];
  submit: (input: WebhookInput) => Promise<void>;
  onCancel: () => void;
}): React.JSX.Element {
  const initial = props.initial;
  const [url, setUrl] = useState(initial?.url ?? 'https://');
  const [allEvents, setAllEvents] = useState(!initial || initial.events.includes(ALL_EVENTS));
  const [events, setEvents] = useState<Set<string>>(new Set(initial?.events.filter((event) => event !== ALL_EVENTS) ?? []));
  const [allCollections, setAllCollections] = useState(!initial?.collections);
  const [collections, setCollections] = useState<Set<string>>(new Set(initial?.collections ?? []));
  const form = useForm(async () => {
    // A choice left empty is said before anything is sent, as the form's one error.
    if (!allEvents && events.size === 0) throw new Error('Choose at least one event, or all events.');
    if (!allCollections && collections.size === 0) throw new Error('Choose at least one collection, or all collections.');
    await props.submit({
      url: url.trim(),
      events: allEvents ? [ALL_EVENTS] : EVENT_TYPES.filter((name) => events.has(name)),
      collections: allCollections ? null : [...collections],
    });
  });

  return (
    <Form form={form} title={props.title} submitLabel={props.submitLabel} busyLabel="Saving…" onCancel={props.onCancel}>
      <Field
        label="Receiver URL"
        hint="The https:// address that receives the signed calls (http:// only on a development server)."
        error={fieldError(form.error, 'url')}
      >
        <input type="url" value={url} onChange={(event) => setUrl(event.target.value)} required maxLength={2048} autoFocus />
      </Field>

      <fieldset>
        <legend>Events</legend>
        <label className="choice">
          <input type="radio" name="webhook-events" checked={allEvents} onChange={() => setAllEvents(true)} /> All events, also ones added in later versions
        </label>
        <label className="choice">
          <input type="radio" name="webhook-events" checked={!allEvents} onChange={() => setAllEvents(false)} /> Only the events chosen below
        </label>
        {!allEvents ? (
          <Checklist label="Events to send" options={EVENT_TYPES.map((name) => ({ value: name, label: <code>{name}</code> }))} chosen={events} onChange={setEvents} />
        ) : null}
      </fieldset>

      <fieldset>
        <legend>Collections</legend>
        <label className="choice">
          <input type="radio" name="webhook-collections" checked={allCollections} onChange={() => setAllCollections(true)} /> All collections
        </label>
        <label className="choice">
          <input
            type="radio"
            name="webhook-collections"
            checked={!allCollections}
            onChange={() => setAllCollections(false)}
            disabled={props.collections.length === 0 && allCollections}
          />{' '}
          Only the collections chosen below
        </label>
        {props.collections.length === 0 ? <p className="hint">There are no collections yet.</p> : null}
        {!allCollections ? (
          <Checklist
            label="Collections to watch"
            options={props.collections.map((collection) => ({ value: collection.id, label: collection.name }))}
            chosen={collections}
            onChange={setCollections}
          />
        ) : null}
      </fieldset>
    </Form>
  );
}
