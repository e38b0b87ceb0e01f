import { useId, useState } from 'react';
import { api } from '../../api.js';
import { Form, useForm } from '../../ui/Form.js';
import type { SchemaVersion } from '../../api-types.js';
import { collectionPath } from './collection-paths.js';
import { SchemaBuilder } from './SchemaBuilder.js';
import { SchemaDiffView } from './SchemaDiffView.js';
import { builderProblems, fieldsOfSchema, schemaOfFields, type BuilderField } from './schema-builder-fields.js';

/** A collection's first version starts with no fields: the person adds their own. */
const EMPTY = { type: 'object', properties: {} };

const asText = (schema: unknown) => `${JSON.stringify(schema, null, 2)}\n`;

/** The JSON text as a schema object, or why it is not one. */
function parseSchema(text: string): { schema: Record<string, unknown>; problem: null } | { schema: null; problem: string } {
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch (parseError) {
    return { schema: null, problem: `Not valid JSON: ${(parseError as Error).message}` };
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return { schema: null, problem: 'A schema is one JSON object, like {"type": "object", "properties": {…}}.' };
  return { schema: schema as Record<string, unknown>, problem: null };
}

/**
 * Writes a new schema version, with the field builder or as JSON Schema 2020-12: two tabs over
 * one schema. The JSON text is what is saved; the builder writes it on every change, and reads it
 * back on every change to the JSON. JSON the builder cannot represent exactly stays as written and
 * the builder says why instead of showing fields. The version is saved as a draft; with
 * "activate" ticked, the page then activates it the way its Activate button does.
 */
export function SchemaVersionForm(props: {
  collection: string;
  /** The newest version: the new one starts from it, and what changes from it is shown. */
  previous: SchemaVersion | null;
  onCreated: (version: SchemaVersion, activate: boolean) => void;
  onCancel: () => void;
}) {
  const id = useId();
  const start = props.previous?.schema ?? EMPTY;
  const [text, setText] = useState(() => asText(start));
  const [reading, setReading] = useState(() => fieldsOfSchema(start));
  /** The builder's own fields: they may hold what JSON cannot (two rows named alike while typing). */
  const [fields, setFields] = useState<BuilderField[]>(() => reading.fields ?? []);
  /** Bumped when the JSON is edited, so the builder's rows start again from what it reads. */
  const [builderRevision, setBuilderRevision] = useState(0);
  const [tab, setTab] = useState<'builder' | 'json'>(reading.fields ? 'builder' : 'json');
  const [activate, setActivate] = useState(true);
  const [problems, setProblems] = useState<string[]>([]);
  const parsed = parseSchema(text);

  function editFields(next: BuilderField[]) {
    setFields(next);
    setText(asText(schemaOfFields(next)));
    setReading({ fields: next, problem: null });
    setProblems([]);
  }

  function editText(next: string) {
    setText(next);
    setProblems([]);
    const schema = parseSchema(next);
    const nextReading = schema.schema ? fieldsOfSchema(schema.schema) : { fields: null, problem: schema.problem };
    setReading(nextReading);
    if (nextReading.fields) {
      setFields(nextReading.fields);
      setBuilderRevision((revision) => revision + 1);
    }
  }

  const form = useForm(async () => {
    const found = parsed.schema ? (reading.fields ? builderProblems(fields) : []) : [parsed.problem];
    setProblems(found);
    if (!parsed.schema || found.length) return;
    const version = await api<SchemaVersion>('POST', collectionPath(props.collection, 'schemas'), { schema: parsed.schema });
    props.onCreated(version, activate);
  });

  const tabButton = (name: 'builder' | 'json', label: string) => (
    <button type="button" role="tab" id={`${id}-${name}-tab`} aria-selected={tab === name} aria-controls={`${id}-${name}`} onClick={() => setTab(name)}>
      {label}
    </button>
  );

  return (
    <Form
      form={form}
      title="New schema version"
      titleId={`${id}-title`}
      submitLabel={activate ? 'Create and activate' : 'Create as draft'}
      busyLabel="Saving…"
      onCancel={props.onCancel}
    >
      <p className="hint">
        Describes one record's data. A version never changes once created; write a new one to change the rules. Records already stored are not re-checked.
      </p>
      <div className="toolbar" role="tablist" aria-label="Write the schema with">
        {tabButton('builder', 'Builder')}
        {tabButton('json', 'JSON')}
      </div>
      {tab === 'builder' ? (
        <div role="tabpanel" id={`${id}-builder`} aria-labelledby={`${id}-builder-tab`}>
          {reading.fields ? (
            <SchemaBuilder key={builderRevision} fields={fields} onChange={editFields} />
          ) : (
            <p className="notice" role="status">
              The builder cannot show this schema: {reading.problem} It is kept as written; edit it on the JSON tab, and the builder follows once it can show it.
            </p>
          )}
        </div>
      ) : (
        <div role="tabpanel" id={`${id}-json`} aria-labelledby={`${id}-json-tab`} className="field">
          <label htmlFor={`${id}-schema`}>Schema (JSON Schema 2020-12)</label>
          <textarea
            id={`${id}-schema`}
            className="code"
            value={text}
            onChange={(event) => editText(event.target.value)}
            rows={Math.min(28, Math.max(10, text.split('\n').length + 1))}
            wrap="off"
            spellCheck={false}
            aria-invalid={problems.length > 0 || form.error ? true : undefined}
          />
          {reading.fields ? null : <small className="hint">The builder cannot show this schema: {reading.problem}</small>}
        </div>
      )}
      {props.previous && parsed.schema ? <SchemaDiffView before={props.previous.schema} after={parsed.schema} title={`Changes from version ${props.previous.version}`} /> : null}
      <label className="check">
        <input type="checkbox" checked={activate} onChange={(event) => setActivate(event.target.checked)} /> Activate it now (every new or changed record must match it)
      </label>
      {problems.length ? (
        <ul className="field-errors" role="alert" aria-label="Problems in the schema">
          {problems.map((problem) => (
            <li key={problem}>{problem}</li>
          ))}
        </ul>
      ) : null}
    </Form>
  );
}
