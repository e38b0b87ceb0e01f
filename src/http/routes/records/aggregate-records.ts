import { Type } from 'typebox';
import { aggregateRecords } from '../../../modules/records/aggregate-records.js';
import { AGGREGATE_LIMITS } from '../../../modules/records/query/aggregate.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { readScope } from '../../public-read.js';
import { AnyObject } from '../../schemas.js';
import { CollectionParams } from '../collections/collection-schemas.js';

const NumbersByField = (what: string) => Type.Optional(AnyObject({ description: `${what} of each field, by its name (data.amount); null for a group without numbers in it.` }));

const AggregateGroup = Type.Object({
  group: AnyObject({ description: 'The group\'s value of each groupBy field, by its name as written (data.plan, createdAt:day); empty without groupBy.' }),
  count: Type.Integer({ description: 'How many records are in the group.' }),
  sum: NumbersByField('The sum of the numbers'),
  avg: NumbersByField('The mean of the numbers'),
  min: NumbersByField('The smallest number'),
  max: NumbersByField('The largest number'),
  countDistinct: Type.Optional(AnyObject({ description: 'How many distinct numbers, strings and booleans each field holds in the group.' })),
});

const AggregatePage = Type.Object(
  {
    data: Type.Array(AggregateGroup),
    nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as ?cursor= for the next page; null on the last page.' }),
    skipped: AnyObject({
      description: 'By field: records left out because the value could not be used: not a number for sum, avg, min and max; an array or an object for groupBy. Over the whole aggregate, the same on every page.',
    }),
  },
  {
    examples: [{
      data: [{ group: { 'data.plan': 'pro', 'createdAt:day': '2026-11-28' }, count: 3, sum: { 'data.amount': 42 } }],
      nextCursor: null,
      skipped: { 'data.amount': 0 },
    }],
  },
);

export const registerAggregateRecords: RegisterRoute = (app, deps) =>
  app.get('/v1/collections/:col/aggregate', {
    config: { operation: 'records.aggregate', access: needs('records:read', { publicRead: true }) },
    schema: {
      summary: 'Aggregate records: count, sum, avg, min, max and countDistinct, grouped by fields or by time buckets',
      tags: ['records'],
      params: CollectionParams,
      querystring: Type.Object(
        {
          filter: Type.Optional(Type.String({ maxLength: 4096, description: 'Which records, as in a list; see docs/queries.md.' })),
          groupBy: Type.Optional(Type.String({ maxLength: 2000, description: `Up to ${AGGREGATE_LIMITS.groupBy} fields: data paths, or createdAt/updatedAt with :hour, :day, :week or :month. Example: data.plan,createdAt:day` })),
          metrics: Type.Optional(Type.String({ maxLength: 4000, description: 'Comma list of count, sum:<field>, avg:<field>, min:<field>, max:<field>, countDistinct:<field>. count is always answered.' })),
          tz: Type.Optional(Type.String({ maxLength: 64, description: 'The IANA time zone of the time buckets, like Europe/Berlin. Default UTC.' })),
          sort: Type.Optional(Type.String({ maxLength: 4000, description: 'Comma list of count, groupBy fields and metrics, - for descending: -count,data.plan. Default: by the groupBy fields.' })),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: AGGREGATE_LIMITS.limit, default: 50, description: 'Groups per page.' })),
          cursor: Type.Optional(Type.String({ maxLength: 200 })),
        },
        { additionalProperties: false },
      ),
      response: { 200: AggregatePage },
    },
    handler: async (request) => {
      const scope = await readScope(deps, request, request.params.col);
      const { limit = 50, ...query } = request.query;
      const caller = request.auth.workspaceId === null ? 'anonymous' : 'credentialed';
      return aggregateRecords(deps, scope.workspaceId, scope.collection, { ...query, limit }, caller);
    },
  });
