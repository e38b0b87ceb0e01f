import { Type } from 'typebox';

/**
 * `sort` of the lists kept in creation order (collections, files, keys): the records list's
 * spelling, limited to the one field these lists are ordered by. Ids are made from the creation
 * time, so the order is the id's, and the cursor is the last id in either direction.
 */
export const CreatedAtSort = Type.Optional(
  Type.Union([Type.Literal('createdAt'), Type.Literal('-createdAt')], {
    description: 'createdAt: oldest first (the default); -createdAt: newest first. The cursor continues in the order it was made in.',
  }),
);

export const isNewestFirst = (sort: 'createdAt' | '-createdAt' | undefined): boolean => sort === '-createdAt';
