/**
 * Where each field of a JSON text is, by line, so the record editor can put the schema's error
 * for `data.address.city` next to the line that holds "city". Paths are the API's: `data` for the
 * whole object, then keys and array positions joined by dots (`data.tags.0`).
 *
 * A small scanner, not a parser: it only has to follow nesting, and it copes with broken text by
 * recording what it has seen so far.
 */
export function fieldLines(text: string): Map<string, number> {
  type Frame = { kind: 'object'; path: string; key: string | null; expectKey: boolean } | { kind: 'array'; path: string; index: number; expectValue: boolean };
  const lines = new Map<string, number>();
  const stack: Frame[] = [];
  let line = 0;

  /** The path of a value that starts now, recording its line when it is an array item. */
  const valueStarts = (): string => {
    const top = stack[stack.length - 1];
    if (!top) {
      if (!lines.has('data')) lines.set('data', line);
      return 'data';
    }
    if (top.kind === 'object') return `${top.path}.${top.key ?? ''}`;
    const path = `${top.path}.${top.index}`;
    if (top.expectValue) {
      lines.set(path, line);
      top.expectValue = false;
    }
    return path;
  };

  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '\n') {
      line += 1;
    } else if (char === '"') {
      const startLine = line;
      let end = i + 1;
      while (end < text.length && text[end] !== '"') {
        if (text[end] === '\\') end += 1;
        else if (text[end] === '\n') line += 1;
        end += 1;
      }
      const top = stack[stack.length - 1];
      if (top?.kind === 'object' && top.expectKey) {
        top.key = decodeKey(text.slice(i, end + 1));
        top.expectKey = false;
        lines.set(`${top.path}.${top.key}`, startLine);
      } else {
        valueStarts();
      }
      i = end;
    } else if (char === '{' || char === '[') {
      const path = valueStarts();
      stack.push(char === '{' ? { kind: 'object', path, key: null, expectKey: true } : { kind: 'array', path, index: 0, expectValue: true });
    } else if (char === '}' || char === ']') {
      stack.pop();
    } else if (char === ',') {
      const top = stack[stack.length - 1];
      if (top?.kind === 'object') top.expectKey = true;
      else if (top?.kind === 'array') {
        top.index += 1;
        top.expectValue = true;
      }
    } else if (char !== undefined && !/[\s:]/.test(char)) {
      valueStarts(); // a number, true, false or null
    }
  }
  return lines;
}

function decodeKey(quoted: string): string {
  try {
    return JSON.parse(quoted) as string;
  } catch {
    return quoted.slice(1, -1);
  }
}

/** The line to show a field's error on: its own, or else its nearest parent's (a missing required field is reported on its parent). */
export function lineOfField(lines: Map<string, number>, field: string): number {
  const segments = field.split('.');
  while (segments.length > 0) {
    const line = lines.get(segments.join('.'));
    if (line !== undefined) return line;
    segments.pop();
  }
  return 0;
}

/** The line of a character offset in a text (for JSON.parse's "at position N"). */
export function lineAt(text: string, position: number): number {
  let line = 0;
  for (let i = 0; i < Math.min(position, text.length); i++) if (text[i] === '\n') line += 1;
  return line;
}
