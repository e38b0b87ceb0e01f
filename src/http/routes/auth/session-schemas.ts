import { Type } from 'typebox';
import { EXAMPLE_TIME, exampleId, idOf, Timestamp } from '../../schemas.js';

/** One of the signed-in person's sessions, as the sessions routes show it: never its secret. */
export const Session = Type.Object(
  {
    id: idOf('ses'),
    createdAt: Timestamp,
    lastUsedAt: Type.String({ format: 'date-time', description: 'When it was last used, to the minute: a use is recorded at most once a minute.' }),
    expiresAt: Type.String({ format: 'date-time', description: 'When it ends at the latest; it ends sooner when left unused for PLAINBASE_SESSION_IDLE_MINUTES.' }),
    ip: Type.Union([Type.String(), Type.Null()], { description: 'The address of its last recorded use.' }),
    userAgent: Type.Union([Type.String(), Type.Null()], { description: 'The User-Agent of its last recorded use (up to 512 characters).' }),
    current: Type.Boolean({ description: 'Whether this is the session making the request.' }),
  },
  {
    examples: [
      {
        id: exampleId('ses'),
        createdAt: EXAMPLE_TIME,
        lastUsedAt: EXAMPLE_TIME,
        expiresAt: '2026-11-29T10:00:00.000Z',
        ip: '203.0.113.7',
        userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0',
        current: true,
      },
    ],
  },
);
