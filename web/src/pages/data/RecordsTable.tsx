import type { ComponentProps, ReactNode } from 'react';
import { DataTable, type Column } from '../../ui/DataTable.js';
import { Time } from '../../ui/Time.js';
import type { RecordItem } from '../../api-types.js';

const MAX_DATA_COLUMNS = 12;
/** A data key the filter and sort syntax can name (docs/queries.md): letters, digits, _, not starting with a digit. */
const NAMEABLE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The columns: the data's top-level keys in the order first seen, then the record's times. */
export function dataColumns(records: RecordItem[]): string[] {
  const keys = new Set<string>();
  for (const record of records) {
    for (const key of Object.keys(record.data)) {
      keys.add(key);
      if (keys.size >= MAX_DATA_COLUMNS) return [...keys];
    }
  }
  return [...keys];
}

/** The order when the address names none: newest first (the API's own default is oldest first, so it is asked for). */
export const DEFAULT_SORT_PARAM = '-createdAt';
const DEFAULT_SORT = parseSortParam(DEFAULT_SORT_PARAM)!;

/** `-data.age` → {field: 'data.age', descending: true}. Only the first field of a sort is shown. */
export function parseSortParam(sort: string): { field: string; descending: boolean } | null {
  const first = sort.split(',')[0]?.trim();
  if (!first) return null;
  return first.startsWith('-') ? { field: first.slice(1), descending: true } : { field: first, descending: false };
}

/** The column id of a data field: `data.<key>`, like the filter names it. */
export const dataColumnId = (key: string) => `data.${key}`;

type TableProps = ComponentProps<typeof DataTable<RecordItem>>;

/**
 * The records in the shared table: the id, the data's fields, the attached files and the times.
 * A sortable column's header is a button: ascending, then descending, then back to the default
 * order. aria-sort tells screen readers which column the order follows.
 */
export function RecordsTable(
  props: {
    records: RecordItem[];
    sort: string;
    onSort: (sort: string) => void;
    caption: string;
    /** A search without a chosen order: best matches first, so no column is marked as the order. */
    ranked?: boolean;
    /** Records that just changed (live updates): their rows are marked for a moment. */
    highlighted?: ReadonlySet<string>;
  } & Omit<TableProps, 'rows' | 'rowKey' | 'columns' | 'caption' | 'rowClassName'>,
) {
  const { records, sort, onSort, ranked, highlighted, ...table } = props;
  const keys = dataColumns(records);
  const withFiles = records.some((record) => record.files.length > 0);
  const current = parseSortParam(sort) ?? (ranked ? null : DEFAULT_SORT);

  function sortable(label: string, field: string): Pick<Column<RecordItem>, 'header' | 'ariaSort'> {
    const order = current?.field === field ? current : null;
    // Ascending, descending, then back to the default order (newest first); from the default,
    // its own column turns to ascending.
    const descendingIsDefault = field === DEFAULT_SORT.field && DEFAULT_SORT.descending;
    const next = !order ? field : !order.descending ? (descendingIsDefault ? '' : `-${field}`) : sort === '' ? field : '';
    const arrow = order ? (order.descending ? '▼' : '▲') : '';
    return {
      ariaSort: order ? (order.descending ? 'descending' : 'ascending') : 'none',
      header: (
        <button type="button" className="sort-button" onClick={() => onSort(next)} title={`Sort by ${label}`}>
          {label} <span aria-hidden="true">{arrow}</span>
        </button>
      ),
    };
  }

  const columns: Column<RecordItem>[] = [
    { id: 'id', label: 'id', fixed: true, cell: (record) => <code>{record.id}</code>, title: (record) => record.id, ...sortable('id', 'id') },
    ...keys.map(
      (key): Column<RecordItem> => ({
        id: dataColumnId(key),
        label: key,
        cell: (record) => cell(record.data[key]),
        title: (record) => fullValue(record.data[key]),
        ...(NAMEABLE.test(key) ? sortable(key, dataColumnId(key)) : {}),
      }),
    ),
    ...(withFiles ? [{ id: 'files', label: 'attached files', cell: (record: RecordItem) => (record.files.length ? `${record.files.length} attached` : '') }] : []),
    { id: 'createdAt', label: 'createdAt', cell: (record) => <Time value={record.createdAt} />, ...sortable('createdAt', 'createdAt') },
    { id: 'updatedAt', label: 'updatedAt', cell: (record) => <Time value={record.updatedAt} />, ...sortable('updatedAt', 'updatedAt') },
  ];

  return (
    <DataTable<RecordItem>
      {...table}
      caption={props.caption}
      rows={records}
      rowKey={(record) => record.id}
      columns={columns}
      rowClassName={(record) => (highlighted?.has(record.id) ? 'row-changed' : undefined)}
    />
  );
}

/** A cell's value, cut to what a cell shows (CSS cuts it further, with an ellipsis). */
function cell(value: unknown): ReactNode {
  if (value === undefined) return <span className="muted" aria-label="missing">–</span>;
  if (value === null) return <span className="muted">null</span>;
  if (typeof value === 'string') return value.length > 200 ? `${value.slice(0, 200)}…` : value;
  const text = JSON.stringify(value);
  return <code>{text.length > 200 ? `${text.slice(0, 200)}…` : text}</code>;
}

/** The whole value, for the hover title: text as it is, anything else as JSON. */
export function fullValue(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value : JSON.stringify(value);
}
