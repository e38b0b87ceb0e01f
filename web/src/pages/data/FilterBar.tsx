import { Fragment, useEffect, useId, useState, type FormEvent } from 'react';
import { ApiError, errorText } from '../../api.js';

/**
 * The filter of the records list, in the API's own syntax (docs/queries.md). A bad filter comes
 * back as 400 with details.position: the bar says what is wrong and points at where. `fields` are
 * the collection's own data fields (its active schema's, or those of the records shown), so the
 * hint names what this collection has.
 */
export function FilterBar(props: { filter: string; error: unknown; fields: string[]; onApply: (filter: string) => void }) {
  const [text, setText] = useState(props.filter);
  const id = useId();
  useEffect(() => setText(props.filter), [props.filter]);

  const problem = filterProblem(props.error);

  function submit(event: FormEvent) {
    event.preventDefault();
    props.onApply(text.trim());
  }

  return (
    <form className="filter-bar" role="search" aria-label="Filter records" onSubmit={submit}>
      <label htmlFor={`${id}-filter`}>Filter</label>
      <div className="filter-row">
        <input
          id={`${id}-filter`}
          type="search"
          value={text}
          onChange={(event) => setText(event.target.value)}
          placeholder={props.fields.length ? `data.${props.fields[0]} = "…"` : 'data.field = "value"'}
          spellCheck={false}
          autoComplete="off"
          aria-invalid={problem ? true : undefined}
          aria-describedby={`${id}-help${problem ? ` ${id}-error` : ''}`}
        />
        <button type="submit">Apply</button>
        {props.filter ? (
          <button type="button" onClick={() => props.onApply('')}>
            Clear
          </button>
        ) : null}
      </div>
      <small id={`${id}-help`} className="hint">
        Fields{' '}
        {props.fields.length ? (
          props.fields.map((field) => (
            <Fragment key={field}>
              <code>data.{field}</code>,{' '}
            </Fragment>
          ))
        ) : (
          <>
            <code>data.</code>
            <var>field</var> (any field of the records),{' '}
          </>
        )}
        <code>id</code>, <code>createdAt</code>, <code>updatedAt</code>; operators{' '}
        <code>= != &gt; &gt;= &lt; &lt;= ~</code> (contains), <code>in [..]</code>, combined with <code>&amp;&amp;</code>, <code>||</code> and
        parentheses. Text goes in double quotes.
      </small>
      {problem ? (
        <div id={`${id}-error`} role="alert" className="error filter-error">
          <p>{problem.message}</p>
          {problem.position !== null ? (
            <pre aria-hidden="true">
              {props.filter}
              {'\n'}
              {' '.repeat(problem.position)}^
            </pre>
          ) : null}
        </div>
      ) : null}
    </form>
  );
}

/** A bad filter's message, and where it went wrong when the API says so. */
export function filterProblem(error: unknown): { message: string; position: number | null } | null {
  if (!(error instanceof ApiError) || error.status !== 400) return null;
  const details = (error.details ?? {}) as { position?: unknown; field?: unknown };
  const aboutFilter = typeof details.position === 'number' || details.field === 'querystring.filter' || /filter/i.test(error.message);
  if (!aboutFilter) return null;
  return { message: errorText(error), position: typeof details.position === 'number' ? details.position : null };
}
