import { Type } from 'typebox';
import { MAX_SEARCH_FIELDS } from '../../../modules/collections/search-settings.js';
import { MAX_ORIGINS } from '../../../modules/collections/submission-settings.js';
import { EXAMPLE_LATER, EXAMPLE_TIME, exampleId, Timestamp } from '../../schemas.js';

export const CollectionRef = Type.String({
  pattern: '^(col_[0-9a-z]{26}|[a-z][a-z0-9_]{0,62})$',
  description: "The collection's id (col_…) or its name.",
});
export const CollectionParams = Type.Object({ col: CollectionRef });
export const CollectionName = Type.String({ pattern: '^[a-z][a-z0-9_]{0,62}$', description: 'Lower case letters, digits and _, starting with a letter.' });

const SubmissionOrigin = Type.String({ minLength: 1, maxLength: 300, description: 'An origin as browsers send it, like https://example.com, or * for any.' });
const Provider = Type.Union([Type.Literal('turnstile'), Type.Literal('hcaptcha')]);
const SubmissionFields = {
  enabled: Type.Boolean({ description: 'Whether anyone may add a record to this collection without a credential (POST …/records).' }),
  origins: Type.Array(SubmissionOrigin, { maxItems: MAX_ORIGINS, description: 'Web pages (origins) allowed to submit; a request with no Origin header (a server, curl) is always allowed.' }),
  ratePerMinute: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, description: 'Submissions allowed per client address per minute; 10 when unset.' })),
  honeypot: Type.Optional(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_-]{0,63}$', description: 'A field that people leave empty: a submission that fills it is answered 201 and not stored.' })),
};

/** What a create or an update may send: the CAPTCHA secret is write-only. */
export const SubmissionsInput = Type.Object(
  {
    ...SubmissionFields,
    origins: Type.Optional(SubmissionFields.origins),
    captcha: Type.Optional(Type.Union([
      Type.Object({ provider: Provider, secret: Type.Optional(Type.String({ minLength: 1, maxLength: 1000, description: 'Write-only: never shown again. Leave it out to keep the stored one.' })) }, { additionalProperties: false }),
      Type.Null(),
    ], { description: 'A CAPTCHA every submission must pass; null removes it, leaving it out keeps it.' })),
  },
  { additionalProperties: false, description: 'Public submissions (docs/data-api.md, "Public submissions").' },
);

/** What answers show: the CAPTCHA's provider, never its secret. */
const SubmissionsView = Type.Object({
  ...SubmissionFields,
  captcha: Type.Optional(Type.Object({ provider: Provider })),
});

const SearchFields = Type.Array(Type.String({ maxLength: 1100 }), {
  maxItems: MAX_SEARCH_FIELDS,
  description: `The data paths full-text search looks in (?search= on the records list; docs/queries.md, Search), like ["data.title", "data.body"]: at most ${MAX_SEARCH_FIELDS}. Changing them rebuilds the index in the background; null or [] turns search off.`,
});

export const Settings = Type.Object(
  {
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    submissions: Type.Optional(SubmissionsInput),
    searchFields: Type.Optional(Type.Union([SearchFields, Type.Null()])),
  },
  { additionalProperties: false, description: 'Collection settings: a description, public submissions and the searched fields (docs/data-api.md, Collections). An unknown setting is refused.' },
);

const SearchState = Type.Object(
  {
    state: Type.Union([Type.Literal('building'), Type.Literal('ready')]),
    indexed: Type.Optional(Type.Integer({ description: 'While building: records indexed so far.' })),
    total: Type.Optional(Type.Integer({ description: 'While building: records the collection held when the build began.' })),
  },
  { description: 'Only with settings.searchFields: the search index. ?search= answers 409 until it is ready.' },
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
  settings: Type.Object({ description: Type.String(), submissions: Type.Optional(SubmissionsView), searchFields: Type.Optional(Type.Array(Type.String())) }),
  activeSchemaVersion: Type.Union([Type.Integer(), Type.Null()]),
  search: Type.Optional(SearchState),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  trashedAt: Type.Union([Timestamp, Type.Null()]),
}, { examples: [COLLECTION_EXAMPLE] });
