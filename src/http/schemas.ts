import { Type, type TSchema } from 'typebox';

/** Schemas shared by several routes. Each also names a component of the OpenAPI document. */

/**
 * Any JSON object, whatever its keys. Type.Record(Type.String(), …) says the same with the key
 * pattern ^.*$, and the response serializer drops every key that pattern does not match: a key
 * with a line break in it would vanish from the answer.
 */
export const AnyObject = (options: { description?: string } = {}) => Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true, ...options });

export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ description: 'A stable code from the closed list in the docs, like MISSING_SCOPE.' }),
      message: Type.String({ description: 'A sentence for people; may change.' }),
      requestId: Type.String(),
      details: Type.Optional(AnyObject()),
    }),
  },
  { $id: 'Error', title: 'Error' },
);

export const idOf = (prefix: string) => Type.String({ pattern: `^${prefix}_[0-9a-z]{26}$`, description: `An id starting with ${prefix}_` });

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 in UTC with milliseconds.' });

export const AssignableRole = Type.Union([Type.Literal('admin'), Type.Literal('editor'), Type.Literal('viewer')]);
export const RoleName = Type.Union([Type.Literal('owner'), ...AssignableRole.anyOf]);

export const Email = Type.String({ format: 'email', maxLength: 254 });
export const Password = Type.String({ minLength: 1, maxLength: 1024 });
// At least one visible character and no control characters: a blank name shows as nothing, and
// PostgreSQL text cannot hold U+0000 at all (it would fail as a 500 instead of a 400).
export const DisplayName = Type.String({ minLength: 1, maxLength: 200, pattern: '^(?=.*\\S)[^\\u0000-\\u001F\\u007F]+$' });

export const Person = Type.Object({ id: idOf('per'), email: Type.String(), name: Type.String() });

export const Workspace = Type.Object({ id: idOf('ws'), name: Type.String(), role: RoleName, createdAt: Timestamp });

/** What signing in, accepting an invite and finishing setup answer. */
export const SessionBody = Type.Object({
  person: Person,
  expiresAt: Timestamp,
  workspaces: Type.Array(Workspace),
});

export const listOf = <T extends TSchema>(item: T) =>
  Type.Object({
    data: Type.Array(item),
    nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as ?cursor= for the next page; null on the last page.' }),
  });

export const Paging = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 50 })),
  cursor: Type.Optional(Type.String({ maxLength: 200 })),
};

export const NoContent = Type.Null({ description: 'No content' });
