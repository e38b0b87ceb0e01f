/** Cursor paging: the API answers a page and a cursor for the next; "Load more" fetches it. */
export function Pager(props: { hasMore: boolean; onMore: () => void; loading?: boolean }): React.JSX.Element | null {
  if (!props.hasMore) return null;
  return (
    <div className="pager">
      <button type="button" onClick={props.onMore} disabled={props.loading} aria-busy={props.loading}>
        {props.loading ? 'Loading…' : 'Load more'}
      </button>
    </div>
  );
}
