import { useRef, useState } from 'react';
import { api, type Page } from '../../api.js';
import { navigate, useRoute, useTitle } from '../../router.js';
import { useSession } from '../../session.js';
import { ConfirmDialog } from '../../ui/ConfirmDialog.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { useForm } from '../../ui/Form.js';
import { useHiddenColumns, usePageSize } from '../../ui/DataTable.js';
import { useApiQuery } from '../../query/useApiQuery.js';
import { useEventStream } from '../../ui/useEventStream.js';
import { usePagedQuery, type Paged } from '../../query/usePagedQuery.js';
import { CollectionTabs } from './CollectionTabs.js';
import { ExportPanel } from './ExportPanel.js';
import { FilterBar, filterProblem } from './FilterBar.js';
import { SearchBox } from './SearchBox.js';
import { BulkChanges } from './BulkChanges.js';
import { ImportPanel } from './ImportPanel.js';
import { RecordEditor } from './RecordEditor.js';
import { takeOwnChange } from './own-changes.js';
import { RecordPanel } from './RecordPanel.js';
import { useRecordHistoryInvalidation } from './record-history-query.js';
import { CellEditor } from './CellEditor.js';
import { cellKind, type CellKind } from './cell-kind.js';
import { DEFAULT_SORT_PARAM, RecordsTable } from './RecordsTable.js';
import type { Collection, RecordData, RecordItem, SchemaVersion } from '../../api-types.js';
import { filterFields } from './filter-fields.js';
import { collectionPath } from './collection-paths.js';
import { recordSummary } from './record-summary.js';
import './data.css';

/** The API's own bound on `id in [...]`: a selection past it is changed by filter instead. */
const MAX_SELECTED = 1000;
const INDEXING_POLL_MS = 1000;

/** How long a row stays marked after it changed. */
const MARK_MS = 4000;
const RECORD_EVENTS = 'record.created,record.updated,record.deleted,record.restored';

/**
 * `/collections/:name/records`: the records browser. Filter, sort and the trash view live in the
 * URL (?filter=, ?sort=, ?trashed=true), so a view can be shared and Back works. A row opens the
 * record in a side panel (fields, files, history, what may be done to it); a cell is edited in
 * place; rows picked with their checkboxes are changed together.
 */
export function RecordsPage() {
  const { params, query, path } = useRoute();
  const name = params.name ?? '';
  const filter = query.get('filter') ?? '';
  const sort = query.get('sort') ?? '';
  const trashed = query.get('trashed') === 'true';
  const searchText = query.get('search') ?? '';
  useTitle(`${name}: ${trashed ? 'trashed records' : 'records'}`);
  const session = useSession();

  const [indexing, setIndexing] = useState(false);
  // While the search index is being built, its progress is read again every second.
  const collection = useApiQuery([collectionPath(name)], (signal) => api<Collection>('GET', collectionPath(name), undefined, signal), indexing ? { refreshEveryMs: INDEXING_POLL_MS } : {});
  const searchable = (collection.data?.settings.searchFields?.length ?? 0) > 0;
  const building = collection.data?.search?.state === 'building' ? collection.data.search : null;
  if (indexing !== (building !== null)) setIndexing(building !== null);
  // A search is sent once the index is ready: until then the API answers 409, and the page says why.
  const activeSearch = searchable && !building ? searchText : '';
  const [pageSize, setPageSize] = usePageSize('records');
  const [hiddenColumns, setHiddenColumns] = useHiddenColumns(`records.${session.workspace.id}.${name}`);
  const records = usePagedQuery<RecordItem>([collectionPath(name, 'records'), { filter, sort, trashed, search: activeSearch, pageSize }], (cursor, signal) => {
    const search = new URLSearchParams({ limit: String(pageSize) });
    if (filter) search.set('filter', filter);
    if (activeSearch) search.set('search', activeSearch);
    // A search without a chosen order comes best match first.
    if (sort || !activeSearch) search.set('sort', sort || DEFAULT_SORT_PARAM);
    if (trashed) search.set('trashed', 'true');
    if (cursor) search.set('cursor', cursor);
    else search.set('count', 'true');
    return api<Page<RecordItem>>('GET', `${collectionPath(name, 'records')}?${search}`, undefined, signal);
  });

  const activeVersion = collection.data?.activeSchemaVersion ?? null;
  const activeSchemaPath = collectionPath(name, 'schemas', String(activeVersion));
  const activeSchema = useApiQuery([activeSchemaPath], (signal) => api<SchemaVersion>('GET', activeSchemaPath, undefined, signal), { enabled: activeVersion !== null });
  const fields = filterFields(activeVersion !== null ? activeSchema.data?.schema : null, records.items);

  const [creating, setCreating] = useState(false);
  /** The record open in the side panel, and whether its editor is open there. */
  const [openId, setOpenId] = useState<string | null>(null);
  const [editingOpen, setEditingOpen] = useState(false);
  const [cellEditing, setCellEditing] = useState<{ recordId: string; column: string; field: string; kind: CellKind; choices: unknown[] } | null>(null);
  // The selection belongs to the list it was made in: another filter, order or view starts afresh.
  const listKey = JSON.stringify([name, filter, sort, trashed, activeSearch]);
  const [selection, setSelection] = useState<{ listKey: string; ids: ReadonlySet<string>; allMatching: boolean }>({ listKey, ids: new Set(), allMatching: false });
  const selected = selection.listKey === listKey ? selection.ids : new Set<string>();
  const allMatching = selection.listKey === listKey && selection.allMatching;
  const selectedIds = records.items.filter((record) => selected.has(record.id)).map((record) => record.id);
  const select = (ids: ReadonlySet<string>, everything = false) => setSelection({ listKey, ids, allMatching: everything });
  const [panel, setPanel] = useState<'import' | 'export' | null>(null);
  const [confirming, setConfirming] = useState<{ record: RecordItem; action: 'trash' | 'purge' } | null>(null);
  const [notice, setNotice] = useState('');
  const forgetHistory = useRecordHistoryInvalidation(name);
  const live = useLiveRecords(collection.data?.id ?? null, trashed, records, forgetHistory);

  function setQuery(changes: Record<string, string>) {
    const next = new URLSearchParams(query);
    for (const [key, value] of Object.entries(changes)) {
      if (value) next.set(key, value);
      else next.delete(key);
    }
    const search = next.toString();
    setCellEditing(null);
    setNotice('');
    restoring.clear();
    navigate(search ? `${path}?${search}` : path);
  }

  /** Throws on failure, so the dialog stays open and says why. */
  async function confirmed(record: RecordItem, action: 'trash' | 'purge') {
    await api('DELETE', `${collectionPath(name, 'records', record.id)}${action === 'purge' ? '?permanent=true' : ''}`);
    setConfirming(null);
    setOpenId(null);
    setNotice(action === 'purge' ? `Record ${record.id} is deleted for good.` : `Record ${record.id} is in the trash.`);
    await records.reload();
  }

  const badFilter = filterProblem(records.error);
  const can = session.can.bind(session);
  const selectable = !trashed && (can('records:update') || can('records:delete'));
  const openRecord = openId ? (records.items.find((record) => record.id === openId) ?? null) : null;
  const schema = activeVersion !== null ? activeSchema.data?.schema : null;

  /** Restores the record open in the panel (the trash view's Restore); the page's notice says so. */
  const restoring = useForm(async () => {
    if (!openRecord) return;
    await api('POST', collectionPath(name, 'records', openRecord.id, 'restore'));
    setOpenId(null);
    setNotice(`Record ${openRecord.id} is back.`);
    await records.reload();
  });

  function openRow(record: RecordItem) {
    if (record.id !== openId) setEditingOpen(false);
    setOpenId(record.id);
  }

  /** A cell taken for editing in place: a data field of a live record whose type has an input. */
  function editCell(record: RecordItem, column: string): boolean {
    if (trashed || !can('records:update') || !column.startsWith('data.')) return false;
    const field = column.slice('data.'.length);
    const how = cellKind(schema, field, record.data[field]);
    if (!how) return false;
    setCellEditing({ recordId: record.id, column, field, ...how });
    return true;
  }

  // Changes to every record the filter matches, counted first (a dry run): on their own, or in the
  // selection once "all that match" is picked there.
  const changesByFilter =
    filter && !trashed && !badFilter && (can('records:update') || can('records:delete')) ? (
      <BulkChanges
        collection={name}
        filter={filter}
        search={activeSearch}
        canUpdate={can('records:update')}
        canDelete={can('records:delete')}
        onDone={(done) => {
          setNotice(done);
          select(new Set());
          void records.reload();
        }}
      />
    ) : null;

  function recordActions(record: RecordItem) {
    return trashed ? (
      <>
        {can('records:delete') ? (
          <button type="button" onClick={() => void restoring.send()} disabled={restoring.busy} aria-label={`Restore record ${record.id}`}>
            Restore
          </button>
        ) : null}
        {can('records:purge') ? (
          <button type="button" className="quiet-danger" onClick={() => setConfirming({ record, action: 'purge' })} aria-label={`Delete record ${record.id} for good`}>
            Delete for good
          </button>
        ) : null}
      </>
    ) : (
      <>
        {can('records:update') ? (
          <button type="button" aria-pressed={editingOpen} onClick={() => setEditingOpen(!editingOpen)} aria-label={`Edit record ${record.id}`}>
            Edit
          </button>
        ) : null}
        {can('records:delete') ? (
          <button type="button" className="quiet-danger" onClick={() => setConfirming({ record, action: 'trash' })} aria-label={`Move to trash: record ${record.id}`}>
            Move to trash
          </button>
        ) : null}
      </>
    );
  }

  return (
    <div className="stack">
      <CollectionTabs name={name} title={trashed ? `${name}: trashed records` : `${name}: records`} />
      <ErrorText error={collection.error} />

      <div className="toolbar" role="toolbar" aria-label="Records">
        {!trashed && can('records:create') ? (
          <button type="button" className="primary" onClick={() => setCreating(true)}>
            New record
          </button>
        ) : null}
        {!trashed && can('records:create') ? (
          <button type="button" aria-expanded={panel === 'import'} onClick={() => setPanel(panel === 'import' ? null : 'import')}>
            Import…
          </button>
        ) : null}
        {!trashed ? (
          <button type="button" aria-expanded={panel === 'export'} onClick={() => setPanel(panel === 'export' ? null : 'export')}>
            Export…
          </button>
        ) : null}
        <button type="button" aria-pressed={trashed} onClick={() => setQuery({ trashed: trashed ? '' : 'true', sort: '' })}>
          {trashed ? 'Back to records' : 'Show trashed records'}
        </button>
        <button type="button" aria-pressed={live.paused} onClick={live.togglePause} title="New, changed and trashed records show up here as they happen">
          {live.paused ? 'Resume live updates' : 'Pause live updates'}
        </button>
      </div>
      <p className="hint live-note" aria-live="polite">
        {live.paused ? 'Live updates are paused: changes made elsewhere show when you resume.' : live.note}
      </p>

      {panel === 'import' && !trashed ? <ImportPanel collection={name} onImported={() => void records.reload()} /> : null}
      {panel === 'export' && !trashed ? <ExportPanel collection={name} filter={filter} /> : null}

      {creating ? (
        <RecordEditor
          key="new"
          collection={name}
          record={null}
          activeSchemaVersion={collection.data?.activeSchemaVersion ?? null}
          schema={activeSchema.data?.schema}
          onClose={() => setCreating(false)}
          onSaved={(saved) => {
            setCreating(false);
            setNotice(`Created record ${saved.id}.`);
            void records.reload();
          }}
        />
      ) : null}

      {searchable || searchText ? (
        <SearchBox search={searchText} fields={collection.data?.settings.searchFields ?? []} onApply={(next) => setQuery({ search: next })} />
      ) : null}
      {searchable && building ? (
        <p role="status" className="hint">
          Indexing: {(building.indexed ?? 0).toLocaleString()} of {(building.total ?? 0).toLocaleString()}
          {searchText ? '. The search runs when the index is ready.' : '. Search works when it is done.'}
        </p>
      ) : null}

      <FilterBar filter={filter} error={records.error} fields={fields} onApply={(next) => setQuery({ filter: next })} />

      {selectable && (selectedIds.length > 0 || allMatching) ? (
        <section className="selection-bar stack" aria-label="Selection">
          <p>
            {allMatching
              ? `All ${(records.total ?? 0).toLocaleString()} records that match the filter are selected.`
              : `${selectedIds.length.toLocaleString()} selected.`}{' '}
            {!allMatching && filter && !activeSearch && !badFilter && records.total !== undefined && records.total > selectedIds.length && selectedIds.length === records.items.length ? (
              <button type="button" onClick={() => select(selected, true)}>
                Select all {records.total.toLocaleString()} that match the filter
              </button>
            ) : null}{' '}
            <button type="button" onClick={() => select(new Set())}>
              Clear the selection
            </button>
          </p>
          {allMatching ? (
            changesByFilter
          ) : selectedIds.length > MAX_SELECTED ? (
            <p className="error">At most {MAX_SELECTED.toLocaleString()} records can be changed by selection; use a filter and its changes for more.</p>
          ) : (
            <BulkChanges
              key={selectedIds.join(',')}
              collection={name}
              filter={filter}
              search=""
              selectedIds={selectedIds}
              canUpdate={can('records:update')}
              canDelete={can('records:delete')}
              onDone={(done) => {
                setNotice(done);
                select(new Set());
                void records.reload();
              }}
            />
          )}
        </section>
      ) : null}

      {allMatching ? null : changesByFilter}

      {notice ? <p role="status" className="notice">{notice}</p> : null}
      <ErrorText error={restoring.error} />
      {records.error && !badFilter ? <ErrorText error={records.error} /> : null}

      {!records.error ? (
        <p className="count" aria-live="polite">
          {records.loading && records.items.length === 0
            ? 'Loading…'
            : records.total !== undefined
              ? `${records.total.toLocaleString()} ${trashed ? 'trashed ' : ''}${records.total === 1 ? 'record' : 'records'}${matchWords(filter, activeSearch, records.total === 1)}; showing ${records.items.length.toLocaleString()}.`
              : `Showing ${records.items.length.toLocaleString()}.`}
        </p>
      ) : null}

      {records.items.length > 0 ? (
        <RecordsTable
          records={records.items}
          sort={sort}
          ranked={activeSearch !== '' && sort === ''}
          onSort={(next) => setQuery({ sort: next })}
          caption={`Records of ${name}`}
          highlighted={live.marked}
          rowLabel={(record) => `record ${record.id}`}
          hidden={{ columns: hiddenColumns, onChange: setHiddenColumns }}
          selection={selectable ? { selected, onChange: (ids) => select(ids) } : undefined}
          onOpen={openRow}
          openKey={openRecord?.id ?? null}
          onEdit={editCell}
          editing={
            cellEditing
              ? {
                  rowKey: cellEditing.recordId,
                  column: cellEditing.column,
                  node: (
                    <CellEditor
                      key={`${cellEditing.recordId}.${cellEditing.column}`}
                      collection={name}
                      recordId={cellEditing.recordId}
                      field={cellEditing.field}
                      kind={cellEditing.kind}
                      choices={cellEditing.choices}
                      onClose={() => setCellEditing(null)}
                      onSaved={(saved) => {
                        setCellEditing(null);
                        setNotice(`Saved ${cellEditing.field} of record ${saved.id}.`);
                        records.update((items) => items.map((item) => (item.id === saved.id ? saved : item)));
                      }}
                    />
                  ),
                }
              : null
          }
          onEscape={() => setOpenId(null)}
          pageSize={{ value: pageSize, onChange: setPageSize }}
          pager={{ hasMore: records.hasMore, loading: records.loading, onMore: () => void records.more() }}
        />
      ) : null}
      {!records.loading && !records.error && records.items.length === 0 ? (
        <p className="empty">
          {activeSearch ? `No record matches the search${filter ? ' and the filter' : ''}.` : trashed ? 'No records in the trash.' : filter ? 'No record matches the filter.' : 'No records yet.'}
        </p>
      ) : null}

      {openRecord ? (
        <RecordPanel
          key={openRecord.id}
          collection={name}
          record={openRecord}
          actions={recordActions(openRecord)}
          onClose={() => setOpenId(null)}
          editor={
            editingOpen && !trashed ? (
              <RecordEditor
                key={openRecord.id}
                collection={name}
                record={openRecord}
                activeSchemaVersion={collection.data?.activeSchemaVersion ?? null}
                schema={activeSchema.data?.schema}
                onClose={() => setEditingOpen(false)}
                onSaved={(saved) => {
                  setEditingOpen(false);
                  setNotice(`Saved record ${saved.id}.`);
                  void records.reload();
                }}
              />
            ) : undefined
          }
        />
      ) : null}

      <ConfirmDialog
        open={confirming !== null}
        title={confirming?.action === 'purge' ? 'Delete this record for good?' : 'Move this record to the trash?'}
        message={confirming ? confirmMessage(confirming.record, confirming.action) : ''}
        confirmLabel={confirming?.action === 'purge' ? 'Delete for good' : 'Move to trash'}
        danger
        onConfirm={() => (confirming ? confirmed(confirming.record, confirming.action) : undefined)}
        onCancel={() => setConfirming(null)}
      />
    </div>
  );
}

interface LiveRecords {
  paused: boolean;
  togglePause: () => void;
  /** What happened last, in words. */
  note: string;
  /** Records that changed a moment ago. */
  marked: ReadonlySet<string>;
}

/**
 * Keeps the records list up to date as records change elsewhere (the API's event stream): a
 * change updates its row in place, a trashed record leaves the list, and new or restored records
 * bring the first page again (where they belong depends on the filter and the order). In the
 * trash view every change reloads it. Each change also marks that record's history stale, so an
 * open side panel shows the new version. Paused, nothing changes; resuming reloads the list and
 * the histories.
 */
function useLiveRecords(collectionId: string | null, trashed: boolean, records: Paged<RecordItem>, forgetHistory: (recordId?: string) => void): LiveRecords {
  const [paused, setPaused] = useState(false);
  const [note, announce] = useState('');
  const [marked, setMarked] = useState<ReadonlySet<string>>(new Set());
  const reloadTimer = useRef<ReturnType<typeof setTimeout> | null>(null);

  const reloadSoon = () => {
    if (reloadTimer.current) clearTimeout(reloadTimer.current);
    reloadTimer.current = setTimeout(() => void records.reload(), 300);
  };
  const mark = (id: string) => {
    setMarked((previous) => new Set(previous).add(id));
    setTimeout(() => setMarked((previous) => {
      const next = new Set(previous);
      next.delete(id);
      return next;
    }), MARK_MS);
  };

  const path = collectionId && !paused ? `/v1/events/stream?collections=${encodeURIComponent(collectionId)}&types=${RECORD_EVENTS}` : null;
  useEventStream(path, (event) => {
    const record = event.message.data.record as { id: string; data: RecordData };
    // This tab's own save already said so (own-changes.ts): the list follows, without a second notice.
    const setNote = takeOwnChange(event.type, record.id) ? () => {} : announce;
    forgetHistory(record.id);
    if (trashed) {
      setNote(`Record ${record.id} changed; the trash is up to date.`);
      reloadSoon();
      return;
    }
    switch (event.type) {
      case 'record.updated':
        records.update((items) => items.map((item) => (item.id === record.id ? { ...item, data: record.data } : item)));
        mark(record.id);
        setNote(`Record ${record.id} changed.`);
        break;
      case 'record.deleted':
        records.update((items) => items.filter((item) => item.id !== record.id));
        setNote(`Record ${record.id} was moved to the trash.`);
        break;
      default:
        mark(record.id);
        setNote(`Record ${record.id} ${event.type === 'record.created' ? 'was added' : 'came back from the trash'}.`);
        reloadSoon();
    }
  });

  return {
    paused,
    togglePause: () => {
      if (paused) {
        void records.reload();
        forgetHistory();
      }
      announce('');
      setPaused(!paused);
    },
    note,
    marked,
  };
}

function matchWords(filter: string, search: string, one: boolean): string {
  const verb = one ? ' matches' : ' match';
  if (filter && search) return `${verb} the search and the filter`;
  if (search) return `${verb} the search`;
  return filter ? `${verb} the filter` : '';
}

function confirmMessage(record: RecordItem, action: 'trash' | 'purge'): string {
  if (action === 'trash') return `Record ${record.id} (${recordSummary(record, 120)}) goes to the trash; you can restore it from "Show trashed records".`;
  const files = record.files.length ? ` Its ${record.files.length} attached ${record.files.length === 1 ? 'file is' : 'files are'} detached and deleted when nothing else uses them.` : '';
  return `Record ${record.id} (${recordSummary(record, 120)}) is deleted for good. It cannot be restored.${files}`;
}
