import type { ReactNode } from 'react';
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

/**
 * The records as a table. A sortable column's header is a button: ascending, then descending, then
 * back to the default order. aria-sort tells screen readers which column the order follows.
 */
export function RecordsTable(props: {
  records: RecordItem[];
  sort: string;
  onSort: (sort: string) => void;
  caption: string;
  actions: (record: RecordItem) => ReactNode;
  /** A search without a chosen order: best matches first, so no column is marked as the order. */
  ranked?: boolean;
  /** Records that just changed (live updates): their rows are marked for a moment. */
  highlighted?: ReadonlySet<string>;
}) {
  const columns = dataColumns(props.records);
  const withFiles = props.records.some((record) => record.files.length > 0);
  const current = parseSortParam(props.sort) ?? (props.ranked ? null : DEFAULT_SORT);

  function header(label: string, field: string | null) {
    if (!field) return <th scope="col" key={label}>{label}</th>;
    const order = current?.field === field ? current : null;
    const ariaSort = order ? (order.descending ? 'descending' : 'ascending') : 'none';
    // Ascending, descending, then back to the default order (newest first); from the default,
    // its own column turns to ascending.
    const descendingIsDefault = field === DEFAULT_SORT.field && DEFAULT_SORT.descending;
    const next = !order ? field : !order.descending ? (descendingIsDefault ? '' : `-${field}`) : props.sort === '' ? field : '';
    const arrow = order ? (order.descending ? '▼' : '▲') : '';
    return (
      <th scope="col" key={label} aria-sort={ariaSort}>
        <button type="button" className="sort-button" onClick={() => props.onSort(next)} title={`Sort by ${label}`}>
          {label} <span aria-hidden="true">{arrow}</span>
        </button>
      </th>
    );
  }

  return (
    <div className="table-wrap">
      <table className="records-table">
        <caption className="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            {header('id', 'id')}
            <th scope="col"><span className="visually-hidden">Actions</span></th>
            {columns.map((key) => header(key, NAMEABLE.test(key) ? `data.${key}` : null))}
            {withFiles ? header('attached files', null) : null}
            {header('createdAt', 'createdAt')}
            {header('updatedAt', 'updatedAt')}
          </tr>
        </thead>
        <tbody>
          {props.records.map((record) => (
            <tr key={record.id} className={props.highlighted?.has(record.id) ? 'row-changed' : undefined}>
              <th scope="row"><code>{record.id}</code></th>
              {/* Right after the id, so the actions stay in view when many columns make the table scroll. */}
              <td className="row-actions">{props.actions(record)}</td>
              {columns.map((key) => (
                <td key={key}>{cell(record.data[key])}</td>
              ))}
              {withFiles ? <td>{record.files.length ? `${record.files.length} attached` : ''}</td> : null}
              <td><Time value={record.createdAt} /></td>
              <td><Time value={record.updatedAt} /></td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function cell(value: unknown): ReactNode {
  if (value === undefined) return <span className="muted" aria-label="missing">–</span>;
  if (value === null) return <span className="muted">null</span>;
  if (typeof value === 'string') return value.length > 80 ? `${value.slice(0, 80)}…` : value;
  const text = JSON.stringify(value);
  return <code>{text.length > 80 ? `${text.slice(0, 80)}…` : text}</code>;
}
