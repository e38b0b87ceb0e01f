import { Link } from '../../router.js';
import { CodeSnippet } from '../../ui/CodeSnippet.js';
import { exampleRecord } from './example-record.js';

/**
 * How a program writes and reads this collection, ready to paste: curl and the JavaScript SDK,
 * with this service's address, the collection's name and a record shaped like its active schema.
 * The key stays out of it: both read it from PLAINBASE_KEY (made on the API keys page).
 */
export function ApiSnippets(props: { collection: string; schema: unknown }): React.JSX.Element {
  const origin = window.location.origin;
  const records = `${origin}/v1/collections/${encodeURIComponent(props.collection)}/records`;
  const example = exampleRecord(props.schema);
  const curl = [
    `curl -sS -X POST '${records}' \\`,
    `  -H "Authorization: Bearer $PLAINBASE_KEY" \\`,
    `  -H 'Content-Type: application/json' \\`,
    `  -d '${JSON.stringify({ data: example }).replaceAll("'", "'\\''")}'`,
    '',
    `curl -sS '${records}?sort=-createdAt&limit=10' \\`,
    `  -H "Authorization: Bearer $PLAINBASE_KEY"`,
  ].join('\n');
  const sdk = [
    `import { Plainbase } from '@plainbase/sdk';`,
    '',
    `const pb = new Plainbase({ url: ${JSON.stringify(origin)}, key: process.env.PLAINBASE_KEY });`,
    `const records = pb.collection(${JSON.stringify(props.collection)}).records;`,
    '',
    `const created = await records.create(${JSON.stringify(example, null, 2)});`,
    `const newest = await records.page({ sort: '-createdAt', limit: 10 });`,
  ].join('\n');
  return (
    <section className="panel stack" aria-labelledby="snippets-title">
      <h2 id="snippets-title">Use it from a program</h2>
      <p className="hint">
        Make a key on the <Link to="/keys">API keys</Link> page and put it in <code>PLAINBASE_KEY</code>; the examples write a record shaped like the
        active schema, then read the ten newest.
      </p>
      <CodeSnippet title="curl" text={curl} />
      <CodeSnippet title="JavaScript (@plainbase/sdk)" text={sdk} />
    </section>
  );
}
