import { Fragment, useEffect, useId, useState, type FormEvent } from 'react';

/**
 * The records' text search (`?search=`), shown when the collection has search fields: words all
 * must match, "quoted words" side by side, a trailing * for a word's start. `fields` are the
 * collection's search fields, named in the hint.
 */
export function SearchBox(props: { search: string; fields: string[]; onApply: (search: string) => void }) {
  const [text, setText] = useState(props.search);
  const id = useId();
  useEffect(() => setText(props.search), [props.search]);

  function submit(event: FormEvent) {
    event.preventDefault();
    props.onApply(text.trim());
  }

  return (
    <form className="filter-bar" role="search" aria-label="Search records" onSubmit={submit}>
      <label htmlFor={`${id}-search`}>Search</label>
      <div className="filter-row">
        <input id={`${id}-search`} type="search" value={text} onChange={(event) => setText(event.target.value)} placeholder='words, "a phrase", or a start*' aria-describedby={`${id}-help`} autoComplete="off" maxLength={1000} />
        <button type="submit">Search</button>
        {props.search ? (
          <button type="button" onClick={() => props.onApply('')}>
            Clear search
          </button>
        ) : null}
      </div>
      <small id={`${id}-help`} className="hint">
        Searches {props.fields.length ? props.fields.map((field, index) => <Fragment key={field}>{index ? ', ' : ''}<code>{field}</code></Fragment>) : 'the search fields'}; every word must be there. Best
        matches come first unless you sort by a column.
      </small>
    </form>
  );
}
