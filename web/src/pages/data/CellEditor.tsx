import { useEffect, useRef, useState } from 'react';
import { ApiError, apiVersioned, errorText, fieldError } from '../../api.js';
import type { RecordItem } from '../../api-types.js';
import { collectionPath } from './collection-paths.js';
import { noteOwnChange } from './own-changes.js';
import type { CellKind } from './cell-kind.js';

type Draft = string | boolean;

const draftOf = (kind: CellKind, value: unknown): Draft =>
  kind === 'boolean' ? value === true : kind === 'choice' ? JSON.stringify(value ?? null) : value === undefined || value === null ? '' : String(value);

/** The draft as the value to save; an empty number or text removes the field (null in a merge patch). */
function valueOf(kind: CellKind, draft: Draft): unknown {
  if (kind === 'boolean') return draft === true;
  if (kind === 'choice') return JSON.parse(draft as string) as unknown;
  if (draft === '') return null;
  return kind === 'text' ? draft : Number(draft);
}

/**
 * One field of one record, edited in its cell. The record is read afresh on opening, and its
 * ETag sent back as If-Match with the change (a PATCH of that field alone), so a change someone
 * else saved meanwhile is never overwritten: the API answers 412 and the cell says so, with a
 * reload. The schema's error about the field is shown under the input.
 */
export function CellEditor(props: {
  collection: string;
  recordId: string;
  field: string;
  kind: CellKind;
  choices: unknown[];
  onSaved: (record: RecordItem) => void;
  onClose: () => void;
}) {
  const path = collectionPath(props.collection, 'records', props.recordId);
  const [draft, setDraft] = useState<Draft>(props.kind === 'boolean' ? false : '');
  const [etag, setEtag] = useState<string | null>(null);
  const [opening, setOpening] = useState(true);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState('');
  const [conflict, setConflict] = useState(false);
  const input = useRef<HTMLInputElement & HTMLSelectElement>(null);

  async function open() {
    setOpening(true);
    setProblem('');
    try {
      const { body, etag: opened } = await apiVersioned<RecordItem>('GET', path);
      setDraft(draftOf(props.kind, body.data[props.field]));
      setEtag(opened);
      setConflict(false);
    } catch (caught) {
      setProblem(errorText(caught));
    } finally {
      setOpening(false);
    }
  }

  useEffect(() => {
    void open();
  }, [path, props.field]);
  useEffect(() => {
    if (!opening) input.current?.focus();
  }, [opening]);

  /** Back to the cell, so the keyboard goes on from where it was. */
  function close() {
    input.current?.closest<HTMLElement>('[data-cell]')?.focus();
    props.onClose();
  }

  async function save() {
    if (props.kind !== 'text' && props.kind !== 'boolean' && props.kind !== 'choice' && draft !== '' && !Number.isFinite(Number(draft))) {
      setProblem('Not a number.');
      return;
    }
    setBusy(true);
    setProblem('');
    try {
      const { body } = await apiVersioned<RecordItem>('PATCH', path, { body: { data: { [props.field]: valueOf(props.kind, draft) } }, ifMatch: etag });
      noteOwnChange('record.updated', body.id);
      input.current?.closest<HTMLElement>('[data-cell]')?.focus();
      props.onSaved(body);
    } catch (caught) {
      if (caught instanceof ApiError && caught.status === 412) setConflict(true);
      else setProblem(fieldError(caught, `data.${props.field}`) ?? errorText(caught));
    } finally {
      setBusy(false);
    }
  }

  const label = `${props.field} of record ${props.recordId}`;
  const common = {
    ref: input,
    'aria-label': label,
    'aria-invalid': problem ? true : undefined,
    disabled: opening || busy || conflict,
    onKeyDown: (event: React.KeyboardEvent) => {
      if (event.key === 'Escape') {
        event.preventDefault();
        event.stopPropagation();
        close();
      } else if (event.key === 'Enter') {
        event.preventDefault();
        void save();
      }
    },
  };

  return (
    <div className="cell-editor">
      <div className="cell-editor-row">
        {props.kind === 'boolean' ? (
          <input type="checkbox" {...common} checked={draft === true} onChange={(event) => setDraft(event.target.checked)} />
        ) : props.kind === 'choice' ? (
          <select {...common} value={draft as string} onChange={(event) => setDraft(event.target.value)}>
            {props.choices.map((choice) => (
              <option key={JSON.stringify(choice)} value={JSON.stringify(choice)}>
                {typeof choice === 'string' ? choice : JSON.stringify(choice)}
              </option>
            ))}
          </select>
        ) : (
          <input
            type={props.kind === 'text' ? 'text' : 'number'}
            step={props.kind === 'text' ? undefined : props.kind === 'integer' ? 1 : 'any'}
            {...common}
            value={draft as string}
            onChange={(event) => setDraft(event.target.value)}
            spellCheck={false}
            autoComplete="off"
          />
        )}
        <button type="button" className="primary" onClick={() => void save()} disabled={opening || busy || conflict} aria-label={`Save ${label}`}>
          Save
        </button>
        <button type="button" onClick={close} aria-label={`Cancel editing ${label}`}>
          Cancel
        </button>
      </div>
      {conflict ? (
        <p className="cell-problem" role="alert">
          Changed by someone else since you opened it; nothing was saved.{' '}
          <button type="button" onClick={() => void open()}>
            Reload
          </button>
        </p>
      ) : null}
      {problem ? (
        <p className="cell-problem" role="alert">
          {problem}
        </p>
      ) : null}
    </div>
  );
}
