import ts from 'typescript';

/**
 * Where a source names one of `tables` as SQL would: a string such as 'deliveries' or
 * 'deliveries.state' (how Kysely is given tables and columns), or the text of an sql`…` template.
 * Prose in other strings (an error message that says "deliveries") is not a mention.
 */
export function tableMentions(fileName: string, text: string, tables: readonly string[]): { table: string; line: number }[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const names = tables.join('|');
  const asKyselyName = new RegExp(`^(${names})(\\.|$)`);
  const inSql = new RegExp(`\\b(${names})\\b`, 'g');
  const found: { table: string; line: number }[] = [];
  const lineOf = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node)) {
      const match = asKyselyName.exec(node.text);
      if (match) found.push({ table: match[1]!, line: lineOf(node) });
    } else if (ts.isTaggedTemplateExpression(node) && node.tag.getText(source) === 'sql') {
      for (const match of node.template.getText(source).matchAll(inSql)) found.push({ table: match[1]!, line: lineOf(node) });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}
