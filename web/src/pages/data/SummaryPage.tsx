import { useId, useState } from 'react';
import { api, type Page } from '../../api.js';
import { useRoute, useTitle } from '../../router.js';
import { useApiQuery } from '../../query/useApiQuery.js';
import { DataTable } from '../../ui/DataTable.js';
import { ErrorText } from '../../ui/ErrorText.js';
import type { Aggregate, AggregateGroup, Collection, RecordItem, SchemaVersion } from '../../api-types.js';
import { CollectionTabs } from './CollectionTabs.js';
import { collectionPath } from './collection-paths.js';
import { filterFields } from './filter-fields.js';
import './data.css';

/** Days in the chart, today included. */
export const SUMMARY_DAYS = 30;
/** Values in the group-by table: the most frequent first. */
const GROUPS_SHOWN = 50;
const BAR_WIDTH = 10;
const CHART_HEIGHT = 60;

/**
 * `/collections/:name/summary`: records added per day over the last 30 days (in the person's own
 * time zone) as bars, and how many records hold each value of a chosen data field. Both are the
 * aggregate API's answers; nothing is counted in the browser.
 */
export function SummaryPage() {
  const { params } = useRoute();
  const name = params.name ?? '';
  useTitle(`${name}: summary`);

  const collection = useApiQuery([collectionPath(name)], (signal) => api<Collection>('GET', collectionPath(name), undefined, signal));
  const activeVersion = collection.data?.activeSchemaVersion ?? null;
  const activeSchemaPath = collectionPath(name, 'schemas', String(activeVersion));
  const activeSchema = useApiQuery([activeSchemaPath], (signal) => api<SchemaVersion>('GET', activeSchemaPath, undefined, signal), { enabled: activeVersion !== null });
  // Without a schema, the fields offered are those of the newest records.
  const samplePath = `${collectionPath(name, 'records')}?limit=20&sort=-createdAt`;
  const sample = useApiQuery([samplePath], (signal) => api<Page<RecordItem>>('GET', samplePath, undefined, signal), { enabled: collection.data !== undefined && activeVersion === null });
  const fields = filterFields(activeVersion !== null ? activeSchema.data?.schema : null, sample.data?.data ?? []);

  return (
    <div className="stack">
      <CollectionTabs name={name} title={`${name}: summary`} />
      <ErrorText error={collection.error} />
      <DailyChart collection={name} />
      <GroupByTable collection={name} fields={fields} />
    </div>
  );
}

/** The last `SUMMARY_DAYS` days in the person's time zone, oldest first, as the API names them ("2026-11-28"). */
export function lastDays(now: Date, days = SUMMARY_DAYS): { days: string[]; since: Date } {
  const list: string[] = [];
  for (let back = days - 1; back >= 0; back--) {
    const day = new Date(now.getFullYear(), now.getMonth(), now.getDate() - back);
    list.push(`${day.getFullYear()}-${String(day.getMonth() + 1).padStart(2, '0')}-${String(day.getDate()).padStart(2, '0')}`);
  }
  return { days: list, since: new Date(now.getFullYear(), now.getMonth(), now.getDate() - (days - 1)) };
}

function timeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

function DailyChart(props: { collection: string }) {
  const titleId = useId();
  const summaryId = useId();
  const [{ days, since }] = useState(() => lastDays(new Date()));
  const query = new URLSearchParams({ filter: `createdAt >= "${since.toISOString()}"`, groupBy: 'createdAt:day', tz: timeZone(), limit: '1000' });
  const path = `${collectionPath(props.collection, 'aggregate')}?${query}`;
  const counts = useApiQuery([path], (signal) => api<Aggregate>('GET', path, undefined, signal));
  const byDay = new Map((counts.data?.data ?? []).map((group) => [String(group.group['createdAt:day']), group.count]));
  const perDay = days.map((day) => ({ day, count: byDay.get(day) ?? 0 }));
  const total = perDay.reduce((sum, day) => sum + day.count, 0);
  const highest = Math.max(1, ...perDay.map((day) => day.count));
  const height = (count: number) => (count / highest) * CHART_HEIGHT;

  return (
    <section className="panel stack" aria-labelledby={titleId}>
      <h2 id={titleId}>Records added per day</h2>
      <ErrorText error={counts.error} />
      {counts.data ? (
        <>
          <figure className="chart">
            <svg viewBox={`0 0 ${BAR_WIDTH * perDay.length} ${CHART_HEIGHT}`} preserveAspectRatio="none" role="img" aria-labelledby={`${titleId} ${summaryId}`}>
              <title>Records added per day, oldest first</title>
              {perDay.map((day, index) => (
                <g key={day.day} data-day={day.day} data-count={day.count}>
                  <title>{`${day.day}: ${day.count.toLocaleString()} ${day.count === 1 ? 'record' : 'records'}`}</title>
                  <rect x={index * BAR_WIDTH} y={0} width={BAR_WIDTH} height={CHART_HEIGHT} fill="transparent" />
                  <rect className="bar-accepted" x={index * BAR_WIDTH + 1} y={CHART_HEIGHT - height(day.count)} width={BAR_WIDTH - 2} height={height(day.count)} />
                </g>
              ))}
            </svg>
            <figcaption className="chart-axis" aria-hidden="true">
              <span>{days[0]}</span>
              <span>today</span>
            </figcaption>
          </figure>
          <p id={summaryId} className="chart-summary">
            {total.toLocaleString()} {total === 1 ? 'record' : 'records'} added in the last {SUMMARY_DAYS} days
            {total > 0 ? `, most on ${perDay.reduce((best, day) => (day.count > best.count ? day : best)).day}` : ''}.
          </p>
        </>
      ) : counts.loading ? (
        <p>Loading…</p>
      ) : null}
    </section>
  );
}

function GroupByTable(props: { collection: string; fields: string[] }) {
  const titleId = useId();
  const [chosen, setChosen] = useState('');
  const field = chosen || props.fields[0] || '';
  const query = new URLSearchParams({ groupBy: `data.${field}`, sort: `-count,data.${field}`, limit: String(GROUPS_SHOWN) });
  const path = `${collectionPath(props.collection, 'aggregate')}?${query}`;
  const groups = useApiQuery([path], (signal) => api<Aggregate>('GET', path, undefined, signal), { enabled: field !== '' });
  const rows = groups.data?.data ?? [];
  const skipped = Number(groups.data?.skipped[`data.${field}`] ?? 0);

  return (
    <section className="panel stack" aria-labelledby={titleId}>
      <h2 id={titleId}>Records per value</h2>
      {props.fields.length === 0 ? (
        <p className="empty">No data fields to group by yet.</p>
      ) : (
        <>
          <label className="inline-field">
            Field{' '}
            <select value={field} onChange={(event) => setChosen(event.target.value)}>
              {props.fields.map((option) => (
                <option key={option} value={option}>
                  data.{option}
                </option>
              ))}
            </select>
          </label>
          <ErrorText error={groups.error} />
          {groups.data ? (
            rows.length ? (
              <DataTable<AggregateGroup>
                caption={`Records per value of data.${field}`}
                rows={rows}
                rowKey={(row) => JSON.stringify(row.group)}
                columns={[
                  { id: 'value', label: `data.${field}`, fixed: true, cell: (row) => valueText(row.group[`data.${field}`]), title: (row) => valueText(row.group[`data.${field}`]) },
                  { id: 'count', label: 'records', className: 'number', cell: (row) => row.count.toLocaleString() },
                ]}
              />
            ) : (
              <p className="empty">No records yet.</p>
            )
          ) : null}
          {groups.data?.nextCursor ? <p className="hint">The {GROUPS_SHOWN} most frequent values are shown.</p> : null}
          {skipped > 0 ? <p className="hint">{skipped.toLocaleString()} records hold a list or an object there and are not counted.</p> : null}
        </>
      )}
    </section>
  );
}

/** A group's value: missing and null records are a group of their own. */
function valueText(value: unknown): string {
  if (value === null || value === undefined) return '(none)';
  return typeof value === 'string' ? value : JSON.stringify(value);
}
