import { useEffect, useRef, useState, type KeyboardEvent, type MouseEvent, type ReactNode } from 'react';
import { Pager } from './Pager.js';
import { useStoredState } from './useStoredState.js';
import './data-table.css';

export interface Column<T> {
  /** Stable name of the column: what the column chooser remembers. */
  id: string;
  label: string;
  cell: (row: T) => ReactNode;
  /** The whole value, shown on hover, since a long cell is cut short. */
  title?: (row: T) => string | undefined;
  /** What the header shows instead of the label (a sort button). */
  header?: ReactNode;
  ariaSort?: 'ascending' | 'descending' | 'none';
  /** Always shown (the row's name): not offered by the column chooser. */
  fixed?: boolean;
  /** A class for the column's cells: `actions-cell` for buttons, which are never cut short. */
  className?: string;
}

/** A column of buttons or links acting on the row: unnamed on screen, never cut short. Spread it and add `cell`. */
export const ACTIONS_COLUMN = {
  id: 'actions',
  label: 'Actions',
  header: <span className="visually-hidden">Actions</span>,
  className: 'actions-cell',
} as const;

/** How long a click waits to see whether it is the first of a double click. */
const DOUBLE_CLICK_MS = 250;

export const PAGE_SIZES = [25, 50, 100] as const;
export type PageSize = (typeof PAGE_SIZES)[number];
export const isPageSize = (value: unknown): value is PageSize => PAGE_SIZES.includes(value as PageSize);
const isNames = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === 'string');

/** Columns hidden with the chooser, remembered in this browser under `key` (say, per collection). */
export function useHiddenColumns(key: string): [ReadonlySet<string>, (next: ReadonlySet<string>) => void] {
  const [names, setNames] = useStoredState<string[]>(`plainbase.hidden-columns.${key}`, [], isNames);
  return [new Set(names), (next) => setNames([...next])];
}

/** The number of rows a page asks for, remembered in this browser under `key`. */
export function usePageSize(key: string): [PageSize, (next: PageSize) => void] {
  return useStoredState<PageSize>(`plainbase.page-size.${key}`, 50, isPageSize);
}

/**
 * The dashboard's table: the first column (the row's name) stays in view while the table scrolls
 * sideways inside its own box, long cells are cut short with the whole value on hover, a column
 * chooser, a page size, row selection and keyboard navigation. One cell at a time is in the tab
 * order (a roving tabindex): the arrow keys, Home and End move it, Enter edits the cell (when
 * `onEdit` takes it) or opens the row, Space selects the row, Escape calls `onEscape`.
 */
export function DataTable<T>(props: {
  caption: string;
  /** Shows the caption above the table (it names the table for screen readers either way). */
  captionShown?: boolean;
  rows: T[];
  rowKey: (row: T) => string;
  /** A name for the row in words, for the selection checkbox's label. */
  rowLabel?: (row: T) => string;
  columns: Column<T>[];
  /** Columns hidden by the chooser; without it there is no chooser. */
  hidden?: { columns: ReadonlySet<string>; onChange: (next: ReadonlySet<string>) => void };
  selection?: { selected: ReadonlySet<string>; onChange: (next: ReadonlySet<string>) => void };
  /** Clicking a row, or Enter on it, opens it (a side panel). */
  onOpen?: (row: T) => void;
  /**
   * The row open in the panel: marked for the eye, and for screen readers as the current one
   * (`aria-current`), since `aria-selected` belongs to grids and this is a plain table.
   */
  openKey?: string | null;
  /** Double-click or Enter on a cell: true when the cell is taken for editing, false to open the row instead. */
  onEdit?: (row: T, column: string) => boolean;
  /** A cell being edited shows this instead of its value. */
  editing?: { rowKey: string; column: string; node: ReactNode } | null;
  onEscape?: () => void;
  rowClassName?: (row: T) => string | undefined;
  pageSize?: { value: PageSize; onChange: (next: PageSize) => void };
  pager?: { hasMore: boolean; loading: boolean; onMore: () => void };
}) {
  const hiddenColumns = props.hidden?.columns ?? new Set<string>();
  const columns = props.columns.filter((column) => column.fixed || !hiddenColumns.has(column.id));
  const [focus, setFocus] = useState({ row: 0, column: 0 });
  const moved = useRef(false);
  const body = useRef<HTMLTableSectionElement>(null);
  const focusRow = Math.min(focus.row, Math.max(0, props.rows.length - 1));
  const focusColumn = Math.min(focus.column, Math.max(0, columns.length - 1));

  useEffect(() => {
    if (!moved.current) return;
    moved.current = false;
    body.current?.querySelector<HTMLElement>(`[data-cell="${focusRow}:${focusColumn}"]`)?.focus();
  }, [focusRow, focusColumn]);

  const selected = props.selection?.selected;
  const keys = props.rows.map(props.rowKey);
  const allSelected = selected !== undefined && keys.length > 0 && keys.every((key) => selected.has(key));
  const someSelected = selected !== undefined && keys.some((key) => selected.has(key));

  function toggle(key: string) {
    if (!props.selection) return;
    const next = new Set(props.selection.selected);
    if (next.has(key)) next.delete(key);
    else next.add(key);
    props.selection.onChange(next);
  }

  function moveTo(nextRow: number, nextColumn: number) {
    moved.current = true;
    setFocus({ row: Math.max(0, Math.min(props.rows.length - 1, nextRow)), column: Math.max(0, Math.min(columns.length - 1, nextColumn)) });
  }

  function onCellKey(event: KeyboardEvent<HTMLElement>, item: T, rowIndex: number, columnIndex: number) {
    // Keys typed into an input inside the cell (an edit) are the input's.
    if (event.target !== event.currentTarget) return;
    const moves: Record<string, [number, number]> = {
      ArrowDown: [rowIndex + 1, columnIndex],
      ArrowUp: [rowIndex - 1, columnIndex],
      ArrowRight: [rowIndex, columnIndex + 1],
      ArrowLeft: [rowIndex, columnIndex - 1],
      Home: [rowIndex, 0],
      End: [rowIndex, columns.length - 1],
    };
    const move = Object.hasOwn(moves, event.key) ? moves[event.key] : undefined;
    if (move) {
      event.preventDefault();
      moveTo(move[0], move[1]);
    } else if (event.key === 'Enter') {
      event.preventDefault();
      if (!props.onEdit?.(item, columns[columnIndex]!.id)) props.onOpen?.(item);
    } else if (event.key === ' ' && props.selection) {
      event.preventDefault();
      toggle(props.rowKey(item));
    } else if (event.key === 'Escape') {
      props.onEscape?.();
    }
  }

  // A click opens the row a moment later, so that a double click (an edit) does not open it too:
  // the panel would cover the cell being edited.
  const openTimer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => () => clearTimeout(openTimer.current ?? undefined), []);
  function onRowClick(event: MouseEvent<HTMLElement>, item: T) {
    clearTimeout(openTimer.current ?? undefined);
    // A control inside the row (the checkbox, an input being edited) does its own thing.
    if (!props.onOpen || event.detail > 1 || (event.target as HTMLElement).closest('button, input, select, textarea, a, label')) return;
    const open = props.onOpen;
    openTimer.current = setTimeout(() => open(item), props.onEdit ? DOUBLE_CLICK_MS : 0);
  }

  return (
    <div className="data-table stack">
      {props.hidden || props.pageSize ? (
        <div className="data-table-tools">
          {props.hidden ? <ColumnChooser columns={props.columns} hidden={props.hidden.columns} onChange={props.hidden.onChange} /> : null}
          {props.pageSize ? (
            <label className="page-size">
              Rows per page{' '}
              <select value={props.pageSize.value} onChange={(event) => props.pageSize!.onChange(Number(event.target.value) as PageSize)}>
                {PAGE_SIZES.map((size) => (
                  <option key={size} value={size}>
                    {size}
                  </option>
                ))}
              </select>
            </label>
          ) : null}
        </div>
      ) : null}
      <div className="table-wrap data-table-scroll">
        <table className={`data-grid${props.selection ? ' with-select' : ''}`}>
          <caption className={props.captionShown ? undefined : 'visually-hidden'}>{props.caption}</caption>
          <thead>
            <tr>
              {props.selection ? (
                <th scope="col" className="select-cell">
                  <input
                    type="checkbox"
                    aria-label="Select every row shown"
                    checked={allSelected}
                    ref={(input) => {
                      if (input) input.indeterminate = someSelected && !allSelected;
                    }}
                    onChange={() => {
                      const next = new Set(props.selection!.selected);
                      for (const key of keys) {
                        if (allSelected) next.delete(key);
                        else next.add(key);
                      }
                      props.selection!.onChange(next);
                    }}
                  />
                </th>
              ) : null}
              {columns.map((column, index) => (
                <th scope="col" key={column.id} aria-sort={column.ariaSort} className={[index === 0 ? 'first-cell' : '', column.className ?? ''].join(' ').trim() || undefined}>
                  {column.header ?? column.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody ref={body}>
            {props.rows.map((item, rowIndex) => {
              const key = props.rowKey(item);
              const open = props.openKey === key;
              const classes = [props.rowClassName?.(item), open ? 'row-open' : undefined, props.onOpen ? 'row-opens' : undefined].filter(Boolean).join(' ');
              return (
                <tr key={key} className={classes || undefined} aria-current={open ? 'true' : undefined} onClick={(event) => onRowClick(event, item)}>
                  {props.selection ? (
                    <td className="select-cell">
                      <input type="checkbox" checked={selected!.has(key)} onChange={() => toggle(key)} aria-label={`Select ${props.rowLabel?.(item) ?? key}`} />
                    </td>
                  ) : null}
                  {columns.map((column, columnIndex) => {
                    const Cell = columnIndex === 0 ? 'th' : 'td';
                    const edited = props.editing && props.editing.rowKey === key && props.editing.column === column.id ? props.editing.node : null;
                    return (
                      <Cell
                        key={column.id}
                        scope={columnIndex === 0 ? 'row' : undefined}
                        className={[columnIndex === 0 ? 'first-cell' : '', column.className ?? '', edited ? 'cell-editing' : ''].join(' ').trim() || undefined}
                        data-cell={`${rowIndex}:${columnIndex}`}
                        data-column={column.id}
                        tabIndex={rowIndex === focusRow && columnIndex === focusColumn ? 0 : -1}
                        title={edited ? undefined : column.title?.(item)}
                        onFocus={() => setFocus({ row: rowIndex, column: columnIndex })}
                        onKeyDown={(event) => onCellKey(event, item, rowIndex, columnIndex)}
                        onDoubleClick={(event) => {
                          clearTimeout(openTimer.current ?? undefined);
                          if (edited || (event.target as HTMLElement).closest('input, button')) return;
                          props.onEdit?.(item, column.id);
                        }}
                      >
                        {edited ?? column.cell(item)}
                      </Cell>
                    );
                  })}
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {props.pager ? <Pager hasMore={props.pager.hasMore} loading={props.pager.loading} onMore={props.pager.onMore} /> : null}
    </div>
  );
}

/** Which columns show: a checkbox for each that may be hidden. */
function ColumnChooser<T>(props: { columns: Column<T>[]; hidden: ReadonlySet<string>; onChange: (next: ReadonlySet<string>) => void }) {
  const choosable = props.columns.filter((column) => !column.fixed);
  if (choosable.length === 0) return null;
  return (
    <details className="column-chooser">
      <summary>Columns{props.hidden.size ? ` (${choosable.filter((column) => props.hidden.has(column.id)).length} hidden)` : ''}</summary>
      <fieldset>
        <legend className="visually-hidden">Columns shown</legend>
        {choosable.map((column) => (
          <label key={column.id} className="check">
            <input
              type="checkbox"
              checked={!props.hidden.has(column.id)}
              onChange={(event) => {
                const next = new Set(props.hidden);
                if (event.target.checked) next.delete(column.id);
                else next.add(column.id);
                props.onChange(next);
              }}
            />
            {column.label}
          </label>
        ))}
      </fieldset>
    </details>
  );
}
