import type { ReactNode } from 'react';

/** Checkboxes for choosing some of a list (scopes, events, collections); `chosen` holds the values ticked. */
export function Checklist(props: {
  label?: string;
  options: { value: string; label: ReactNode }[];
  chosen: ReadonlySet<string>;
  onChange: (chosen: Set<string>) => void;
}): React.JSX.Element {
  const toggle = (value: string, on: boolean) => {
    const next = new Set(props.chosen);
    if (on) next.add(value);
    else next.delete(value);
    props.onChange(next);
  };
  return (
    <ul className="checklist" aria-label={props.label}>
      {props.options.map((option) => (
        <li key={option.value}>
          <label>
            <input type="checkbox" checked={props.chosen.has(option.value)} onChange={(event) => toggle(option.value, event.target.checked)} />
            {option.label}
          </label>
        </li>
      ))}
    </ul>
  );
}
