import { useState } from 'react';
import { KIND_LABELS, hasPattern, limitKeywords, newField, withKind, type BuilderField, type BuilderKind } from './schema-builder-fields.js';

const LIMIT_LABELS: Record<string, [string, string]> = {
  characters: ['Min length', 'Max length'],
  value: ['Minimum', 'Maximum'],
  items: ['Min items', 'Max items'],
};

/**
 * The schema's fields as rows: a name, a kind, required or not, and the limits the kind has. A
 * group of fields holds rows of its own. Each row is a group named by its position ("Field 2.1").
 */
export function SchemaBuilder(props: { fields: BuilderField[]; onChange: (fields: BuilderField[]) => void; path?: string }): React.JSX.Element {
  const { fields, onChange } = props;
  const prefix = props.path ? `${props.path}.` : '';
  const replace = (index: number, field: BuilderField) => onChange(fields.map((old, at) => (at === index ? field : old)));
  const move = (index: number, by: number) => {
    const next = [...fields];
    const [field] = next.splice(index, 1);
    next.splice(index + by, 0, field!);
    onChange(next);
  };
  return (
    <div className="schema-builder stack">
      {fields.length === 0 ? <p className="hint">{props.path ? 'No fields in this group yet.' : 'No fields yet: any JSON object would be accepted.'}</p> : null}
      {fields.map((field, index) => {
        const label = `Field ${prefix}${index + 1}`;
        return (
          <fieldset key={index} className="builder-field" aria-label={label}>
            <div className="builder-row">
              <label>
                Name
                <input value={field.name} onChange={(event) => replace(index, { ...field, name: event.target.value })} spellCheck={false} autoCapitalize="off" />
              </label>
              <label>
                Kind
                <select value={field.kind} onChange={(event) => replace(index, withKind(field, event.target.value as BuilderKind))}>
                  {Object.entries(KIND_LABELS).map(([kind, words]) => (
                    <option key={kind} value={kind}>
                      {words}
                    </option>
                  ))}
                </select>
              </label>
              <label className="check">
                <input type="checkbox" checked={field.required} onChange={(event) => replace(index, { ...field, required: event.target.checked })} /> Required
              </label>
              <span className="row-actions">
                <button type="button" onClick={() => move(index, -1)} disabled={index === 0} aria-label={`Move ${label} up`}>
                  ↑
                </button>
                <button type="button" onClick={() => move(index, 1)} disabled={index === fields.length - 1} aria-label={`Move ${label} down`}>
                  ↓
                </button>
                <button type="button" className="quiet-danger" onClick={() => onChange(fields.filter((_, at) => at !== index))} aria-label={`Remove ${label}`}>
                  Remove
                </button>
              </span>
            </div>
            <Limits field={field} onChange={(next) => replace(index, next)} />
            {field.kind === 'choice' ? <ChoicesInput choices={field.choices} onChange={(choices) => replace(index, { ...field, choices })} /> : null}
            {field.kind === 'object' ? (
              <div className="builder-group">
                <SchemaBuilder fields={field.fields} onChange={(inner) => replace(index, { ...field, fields: inner })} path={`${prefix}${index + 1}`} />
              </div>
            ) : null}
          </fieldset>
        );
      })}
      <div className="actions">
        <button type="button" onClick={() => onChange([...fields, newField()])}>
          {props.path ? `Add a field to group ${props.path}` : 'Add field'}
        </button>
      </div>
    </div>
  );
}

function Limits(props: { field: BuilderField; onChange: (field: BuilderField) => void }): React.JSX.Element | null {
  const { field } = props;
  const limits = limitKeywords(field.kind);
  if (!limits && !hasPattern(field.kind)) return null;
  const [minLabel, maxLabel] = limits ? LIMIT_LABELS[limits.unit]! : ['', ''];
  const whole = field.kind !== 'number';
  return (
    <div className="builder-row">
      {limits ? (
        <>
          <NumberInput label={minLabel} value={field.min} whole={whole} onChange={(min) => props.onChange({ ...field, min })} />
          <NumberInput label={maxLabel} value={field.max} whole={whole} onChange={(max) => props.onChange({ ...field, max })} />
        </>
      ) : null}
      {hasPattern(field.kind) ? (
        <label>
          Pattern
          <input value={field.pattern ?? ''} onChange={(event) => props.onChange({ ...field, pattern: event.target.value === '' ? null : event.target.value })} spellCheck={false} placeholder="^[A-Z]{3}$" />
        </label>
      ) : null}
    </div>
  );
}

function NumberInput(props: { label: string; value: number | null; whole: boolean; onChange: (value: number | null) => void }): React.JSX.Element {
  return (
    <label>
      {props.label}
      <input
        type="number"
        step={props.whole ? 1 : 'any'}
        min={props.whole && props.label !== 'Minimum' && props.label !== 'Maximum' ? 0 : undefined}
        value={props.value === null ? '' : String(props.value)}
        onChange={(event) => props.onChange(event.target.value === '' || !Number.isFinite(Number(event.target.value)) ? null : Number(event.target.value))}
      />
    </label>
  );
}

/** The choices one per line; the text is kept as typed (a new empty line included) while the list follows it. */
function ChoicesInput(props: { choices: string[]; onChange: (choices: string[]) => void }): React.JSX.Element {
  const [text, setText] = useState(props.choices.join('\n'));
  const lines = (value: string) => value.split('\n').filter((line) => line !== '');
  // Changed from outside (another row removed above, the JSON edited): show the choices as they are now.
  if (lines(text).join('\n') !== props.choices.join('\n')) setText(props.choices.join('\n'));
  return (
    <label>
      Choices (one per line)
      <textarea
        rows={Math.max(2, text.split('\n').length)}
        value={text}
        onChange={(event) => {
          setText(event.target.value);
          props.onChange(lines(event.target.value));
        }}
      />
    </label>
  );
}
