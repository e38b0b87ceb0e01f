import { sql, type RawBuilder, type SqlBool } from 'kysely';

/** Our own ids only, since the id is written into SQL as a literal. */
const COLLECTION_ID = /^col_[0-9a-z]{26}$/;

/**
 * `collection_id = '<id>'`: the rows of one collection, the id written as a literal. A record index
 * is a partial index with this predicate (DDL takes no parameters), and a query planned once for
 * all calls (Dialect.preparesRecordQueries) can use one only if it names the collection so too.
 */
export function collectionLiteralPredicate(collectionId: string): RawBuilder<SqlBool> {
  if (!COLLECTION_ID.test(collectionId)) throw new Error(`not a collection id: ${JSON.stringify(collectionId)}`);
  return sql<SqlBool>`${sql.ref('collection_id')} = ${sql.lit(collectionId)}`;
}
