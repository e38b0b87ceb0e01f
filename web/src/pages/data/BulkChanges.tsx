import { useState } from 'react';
import { api } from '../../api.js';
import { ConfirmDialog } from '../../ui/ConfirmDialog.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { Field } from '../../ui/Field.js';
import { useForm } from '../../ui/Form.js';
import type { BulkDeleteResult, BulkUpdateResult } from '../../api-types.js';
import { collectionPath } from './collection-paths.js';
import { idFilter } from './id-filter.js';

type Pending = { kind: 'trash'; matched: number } | { kind: 'set'; matched: number; updated: number; field: string; patch: Record<string, unknown> };

/**
 * Changes by filter on the records table: "Trash all that match the filter" and "Set a field on
 * all that match". Each first asks the API for a dry run, so the confirm says how many records the
 * change takes before anything is written; the change itself is one transaction. Given
 * `selectedIds`, the same changes are offered for the rows picked in the table instead: their
 * filter is `id in [...]` (docs/queries.md), so they too are counted first and made in one go.
 */
export function BulkChanges(props: {
  collection: string;
  filter: string;
  search: string;
  canUpdate: boolean;
  canDelete: boolean;
  onDone: (notice: string) => void;
  selectedIds?: readonly string[];
}) {
  const selected = props.selectedIds ?? null;
  const filter = selected ? idFilter(selected) : props.filter;
  const [setOpen, setSetOpen] = useState(false);
  const [field, setField] = useState('');
  const [value, setValue] = useState('');
  const [pending, setPending] = useState<Pending | null>(null);
  const base = collectionPath(props.collection, 'records');

  // Each change is counted first (a dry run); the confirm dialog then makes it. The two counts
  // have their own error, and starting one forgets the other's.
  const trashCount = useForm(async () => {
    setCount.clear();
    const dry = await api<BulkDeleteResult>('POST', `${base}/bulk-delete`, { filter, dryRun: true });
    setPending({ kind: 'trash', matched: dry.matched });
  });
  const setCount = useForm(async () => {
    trashCount.clear();
    const name = field.trim().replace(/^data\./, '');
    if (!name) return;
    const patch = nestedPatch(name, parseValue(value));
    const dry = await api<BulkUpdateResult>('POST', `${base}/bulk-update`, { filter, patch, dryRun: true });
    setPending({ kind: 'set', matched: dry.matched, updated: dry.updated, field: name, patch });
  });
  const counting = trashCount.busy || setCount.busy;

  /** Throws on failure, so the dialog stays open and says why. */
  async function confirmed() {
    if (!pending) return;
    if (pending.kind === 'trash') {
      const done = await api<BulkDeleteResult>('POST', `${base}/bulk-delete`, { filter });
      props.onDone(`${plural(done.trashed)} moved to the trash.`);
    } else {
      const done = await api<BulkUpdateResult>('POST', `${base}/bulk-update`, { filter, patch: pending.patch });
      props.onDone(`Set ${pending.field} on ${plural(done.updated)}.`);
      setSetOpen(false);
    }
    setPending(null);
  }

  const nothing = pending !== null && (pending.kind === 'trash' ? pending.matched === 0 : pending.updated === 0);

  return (
    <section className="panel stack" aria-label={selected ? 'Changes to the selected records' : 'Changes by filter'}>
      <div className="actions">
        {props.canDelete ? (
          <button type="button" className="quiet-danger" onClick={() => void trashCount.send()} disabled={counting}>
            {selected ? `Trash the ${plural(selected.length)} selected…` : 'Trash all that match the filter…'}
          </button>
        ) : null}
        {props.canUpdate ? (
          <button type="button" aria-expanded={setOpen} onClick={() => setSetOpen(!setOpen)}>
            {selected ? `Set a field on the ${plural(selected.length)} selected…` : 'Set a field on all that match…'}
          </button>
        ) : null}
      </div>
      {props.search && !selected ? <p className="hint">These change every record the filter matches; the search is not part of them.</p> : null}
      {setOpen ? (
        <form className="bulk-form" aria-label={selected ? 'Set a field on the selected records' : 'Set a field on all that match'} onSubmit={(event) => void setCount.send(event)}>
          <Field label="Field" hint="A data field, like plan or address.city">
            <input value={field} onChange={(event) => setField(event.target.value)} required spellCheck={false} autoComplete="off" />
          </Field>
          <Field label="New value" hint='JSON (42, true, null removes the field, "text"); anything else is text'>
            <input value={value} onChange={(event) => setValue(event.target.value)} spellCheck={false} autoComplete="off" />
          </Field>
          <button type="submit" disabled={counting}>
            Count and confirm…
          </button>
        </form>
      ) : null}
      <ErrorText error={trashCount.error ?? setCount.error} />
      <ConfirmDialog
        open={pending !== null}
        title={
          pending?.kind === 'trash'
            ? `Move ${plural(pending.matched)} to the trash?`
            : pending
              ? `Set ${pending.field} on ${plural(pending.updated)}?`
              : ''
        }
        message={pending ? confirmMessage(pending, filter, selected) : ''}
        confirmLabel={nothing ? 'Nothing to change' : pending?.kind === 'trash' ? `Trash ${plural(pending.matched)}` : `Set on ${plural(pending?.kind === 'set' ? pending.updated : 0)}`}
        danger={pending?.kind === 'trash'}
        onConfirm={() => (nothing ? setPending(null) : confirmed())}
        onCancel={() => setPending(null)}
      />
    </section>
  );
}

function confirmMessage(pending: Pending, filter: string, selected: readonly string[] | null): string {
  if (selected) {
    const gone = selected.length - pending.matched;
    if (pending.kind === 'trash') return `The ${plural(pending.matched)} selected go to the trash together${gone > 0 ? ` (${gone} of those selected ${gone === 1 ? 'is' : 'are'} gone already)` : ''}; each can be restored from "Show trashed records".`;
    const unchanged = pending.matched - pending.updated;
    return `${plural(pending.updated)} of the ${selected.length} selected would change${unchanged ? ` (${unchanged} already ${unchanged === 1 ? 'has' : 'have'} that value)` : ''}. Each keeps a version in its history.`;
  }
  if (pending.kind === 'trash') return `${plural(pending.matched)} match ${filter}. They go to the trash together; each can be restored from "Show trashed records".`;
  const same = pending.matched - pending.updated;
  return `${plural(pending.matched)} match ${filter}; ${plural(pending.updated)} would change${same ? ` (${same} already ${same === 1 ? 'has' : 'have'} that value)` : ''}. Each keeps a version in its history.`;
}

function plural(count: number): string {
  return `${count.toLocaleString()} ${count === 1 ? 'record' : 'records'}`;
}

/** The value as JSON when it reads as JSON, else as the text typed. */
export function parseValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** `address.city` and "Paris" → {address: {city: "Paris"}}: a merge patch that changes that field alone. */
export function nestedPatch(path: string, value: unknown): Record<string, unknown> {
  return path
    .split('.')
    .reverse()
    .reduce<unknown>((inner, key) => ({ [key]: inner }), value) as Record<string, unknown>;
}
