import { useEffect, useState } from 'react';
import { Field } from '../../ui/Field.js';
import { fieldProblem, type FormField } from './schema-form.js';

type Data = Record<string, unknown>;

/**
 * The record's data as a form generated from the active schema: one typed input per property,
 * its problem under it (the browser's own check as soon as the field changes or a save is
 * tried, or the API's answer to the save). Fields the schema does not name are kept as they are.
 */
export function RecordForm(props: {
  fields: FormField[];
  data: Data;
  onChange: (data: Data) => void;
  /** The API's messages by property name, from the last save. */
  serverProblems: ReadonlyMap<string, string>;
  /** A save was tried: every field says what is wrong, changed or not. */
  checkAll: boolean;
  disabled: boolean;
}): React.JSX.Element {
  const [touched, setTouched] = useState<ReadonlySet<string>>(new Set());
  const set = (name: string, value: unknown) => {
    // Checked from the first change on, as the person types: a message that appeared only when
    // the field is left would move the Save button under the pointer as it is pressed.
    setTouched((previous) => (previous.has(name) ? previous : new Set(previous).add(name)));
    const next = { ...props.data };
    if (value === undefined) delete next[name];
    else next[name] = value;
    props.onChange(next);
  };
  // A checkbox always says yes or no: a required one left unticked is "no", not missing.
  const unset = props.fields.filter((field) => field.kind === 'boolean' && field.required && props.data[field.name] === undefined);
  useEffect(() => {
    if (unset.length) props.onChange({ ...props.data, ...Object.fromEntries(unset.map((field) => [field.name, false])) });
  }, [unset.length]); // Once the form opens (or the schema arrives), not on every change.
  const others = Object.keys(props.data).filter((key) => !props.fields.some((field) => field.name === key));
  return (
    <div className="record-form">
      {props.fields.map((field) => {
        const value = props.data[field.name];
        const own = props.checkAll || touched.has(field.name) ? fieldProblem(field, value) : null;
        const error = own ?? props.serverProblems.get(field.name);
        const hint = [field.description, field.required ? 'Required.' : null].filter(Boolean).join(' ') || undefined;
        return (
          <div key={field.name}>
            <Field label={field.label} hint={hint} error={error ? `${field.label} ${error}` : undefined}>
              {input(field, value, (next) => set(field.name, next), props.disabled)}
            </Field>
          </div>
        );
      })}
      {others.length ? (
        <p className="hint">
          Also in the record, not in the schema: {others.join(', ')}. Edit them as JSON.
        </p>
      ) : null}
    </div>
  );
}

function input(field: FormField, value: unknown, change: (value: unknown) => void, disabled: boolean): React.JSX.Element {
  switch (field.kind) {
    case 'integer':
    case 'number':
      return (
        <input
          type="number"
          step={field.kind === 'integer' ? 1 : 'any'}
          min={field.minimum ?? undefined}
          max={field.maximum ?? undefined}
          value={typeof value === 'number' ? String(value) : ''}
          onChange={(event) => change(event.target.value === '' ? undefined : Number(event.target.value))}
          disabled={disabled}
        />
      );
    case 'boolean':
      return <input type="checkbox" checked={value === true} onChange={(event) => change(event.target.checked)} disabled={disabled} />;
    case 'long-text':
      return (
        <textarea
          rows={5}
          value={typeof value === 'string' ? value : value === undefined ? '' : JSON.stringify(value)}
          minLength={field.minLength ?? undefined}
          maxLength={field.maxLength ?? undefined}
          onChange={(event) => change(event.target.value === '' ? undefined : event.target.value)}
          disabled={disabled}
        />
      );
    case 'date':
      return <input type="date" value={typeof value === 'string' ? value : ''} onChange={(event) => change(event.target.value === '' ? undefined : event.target.value)} disabled={disabled} />;
    case 'date-time':
      return <DateTimeInput value={value} onChange={change} disabled={disabled} />;
    case 'choice': {
      const choices = field.choices;
      return (
        <select value={value === undefined ? '' : JSON.stringify(value)} onChange={(event) => change(event.target.value === '' ? undefined : JSON.parse(event.target.value))} disabled={disabled}>
          <option value="">—</option>
          {choices.map((choice) => (
            <option key={JSON.stringify(choice)} value={JSON.stringify(choice)}>
              {typeof choice === 'string' ? choice : JSON.stringify(choice)}
            </option>
          ))}
        </select>
      );
    }
    case 'json':
      return <JsonInput value={value} onChange={change} disabled={disabled} />;
    default:
      return (
        <input
          type={field.kind === 'email' ? 'email' : field.kind === 'url' ? 'url' : 'text'}
          value={typeof value === 'string' ? value : value === undefined ? '' : JSON.stringify(value)}
          placeholder={field.kind === 'url' ? 'https://example.com/' : undefined}
          minLength={field.minLength ?? undefined}
          maxLength={field.maxLength ?? undefined}
          onChange={(event) => change(event.target.value === '' ? undefined : event.target.value)}
          spellCheck={field.kind === 'text'}
          disabled={disabled}
        />
      );
  }
}

/**
 * A date and time picked in the person's own time zone and stored as UTC ("2026-01-31T08:30:00.000Z"),
 * as JSON Schema's date-time wants an offset. A stored text the picker cannot show stays editable as text.
 */
function DateTimeInput(props: { value: unknown; onChange: (value: unknown) => void; disabled: boolean; id?: string; 'aria-describedby'?: string }): React.JSX.Element {
  const { value } = props;
  const local = typeof value === 'string' ? localDateTime(value) : '';
  if (typeof value === 'string' && local === null) {
    return <input id={props.id} aria-describedby={props['aria-describedby']} type="text" value={value} onChange={(event) => props.onChange(event.target.value === '' ? undefined : event.target.value)} disabled={props.disabled} />;
  }
  return (
    <input
      id={props.id}
      aria-describedby={props['aria-describedby']}
      type="datetime-local"
      step={1}
      value={local ?? ''}
      onChange={(event) => {
        const picked = new Date(event.target.value);
        props.onChange(event.target.value === '' || Number.isNaN(picked.getTime()) ? undefined : picked.toISOString());
      }}
      disabled={props.disabled}
    />
  );
}

/** "2026-01-31T08:30:00Z" as the picker's local "2026-01-31T09:30:00" (in Paris), or null when it is not a date and time. */
function localDateTime(text: string): string | null {
  if (!/^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}/.test(text)) return null;
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) return null;
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

/** A property the form has no input for (an object, a list, several types): its value as JSON. */
function JsonInput(props: { value: unknown; onChange: (value: unknown) => void; disabled: boolean; id?: string; 'aria-describedby'?: string }): React.JSX.Element {
  const [text, setText] = useState(props.value === undefined ? '' : JSON.stringify(props.value));
  const [bad, setBad] = useState(false);
  return (
    <textarea
      id={props.id}
      aria-describedby={props['aria-describedby']}
      className="code"
      rows={2}
      value={text}
      spellCheck={false}
      aria-invalid={bad || undefined}
      onChange={(event) => {
        setText(event.target.value);
        if (event.target.value.trim() === '') {
          setBad(false);
          props.onChange(undefined);
          return;
        }
        try {
          props.onChange(JSON.parse(event.target.value));
          setBad(false);
        } catch {
          setBad(true);
        }
      }}
      disabled={props.disabled}
    />
  );
}
