import { sql, type RawBuilder, type SqlBool } from 'kysely';

/**
 * A condition written once as text with numbered parameters (`parameter(n)`, from 0, as a
 * directQuery's text is written), made usable in Kysely's builder too: so a guard that some
 * statements carry as text and others as a builder's where is said in one place.
 */
export interface BoundCondition<Input> {
  /** The condition with the values of `input` bound where its parameters are. */
  condition(input: Input): RawBuilder<SqlBool>;
  /** The values the condition binds, in the order Kysely binds them (one may appear more than once). */
  bound(input: Input): unknown[];
}

export function boundCondition<Input>(text: (parameter: (position: number) => string) => string, values: (input: Input) => unknown[]): BoundCondition<Input> {
  // NUL never occurs in SQL: it marks each parameter while the text is cut at them.
  const pieces = text((position) => `\u0000${position}\u0000`).split(/\u0000(\d+)\u0000/);
  const positions = pieces.filter((_piece, index) => index % 2 === 1).map(Number);
  return {
    condition(input) {
      const all = values(input);
      return sql.join(pieces.map((piece, index) => (index % 2 === 1 ? sql.val(all[Number(piece)]) : sql.raw(piece))), sql``) as RawBuilder<SqlBool>;
    },
    bound(input) {
      const all = values(input);
      return positions.map((position) => all[position]);
    },
  };
}
