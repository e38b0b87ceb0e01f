import { Type } from 'typebox';
import { EXAMPLE_LATER, EXAMPLE_TIME, exampleId, Timestamp } from '../../schemas.js';

export const CollectionRef = Type.String({
  pattern: '^(col_[0-9a-z]{26}|[a-z][a-z0-9_]{0,62})$',
  description: "The collection's id (col_…) or its name.",
});
export const CollectionParams = Type.Object({ col: CollectionRef });
export const CollectionName = Type.String({ pattern: '^[a-z][a-z0-9_]{0,62}$', description: 'Lower case letters, digits and _, starting with a letter.' });

export const Settings = Type.Object(
  { description: Type.Optional(Type.String({ maxLength: 2000 })) },
  { additionalProperties: false, description: 'Collection settings: today only a description (docs/data-api.md, Collections). An unknown setting is refused.' },
);

export const COLLECTION_EXAMPLE = {
  id: exampleId('col'),
  name: 'leads',
  public: false,
  settings: { description: 'Sign-ups from the landing page' },
  activeSchemaVersion: 1,
  createdAt: EXAMPLE_TIME,
  updatedAt: EXAMPLE_LATER,
  trashedAt: null,
};

export const Collection = Type.Object({
  id: Type.String(),
  name: Type.String(),
  public: Type.Boolean(),
  settings: Type.Object({ description: Type.String() }),
  activeSchemaVersion: Type.Union([Type.Integer(), Type.Null()]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  trashedAt: Type.Union([Timestamp, Type.Null()]),
}, { examples: [COLLECTION_EXAMPLE] });
