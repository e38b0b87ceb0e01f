import { Type } from 'typebox';
import { invalidRequest } from '../../../errors.js';
import { listAudit } from '../../../modules/audit/audit.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { inWorkspace } from '../../auth.js';
import { decodeCursor, idPosition, page } from '../../cursor.js';
import { AnyObject, EXAMPLE_TIME, exampleId, listOf, Paging, Timestamp } from '../../schemas.js';

const AuditEntry = Type.Object({
  id: Type.String(),
  at: Timestamp,
  actor: Type.Object({
    type: Type.Union([Type.Literal('person'), Type.Literal('key'), Type.Literal('service_account'), Type.Literal('system'), Type.Literal('anonymous')]),
    id: Type.Union([Type.String(), Type.Null()]),
    name: Type.Union([Type.String(), Type.Null()]),
    ip: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'An anonymous caller (a public submission): the address it came from.' })),
  }),
  action: Type.String(),
  target: Type.Union([Type.Object({ type: Type.String(), id: Type.String() }), Type.Null()]),
  ip: Type.Union([Type.String(), Type.Null()]),
  userAgent: Type.Union([Type.String(), Type.Null()]),
  requestId: Type.Union([Type.String(), Type.Null()]),
  details: AnyObject(),
}, {
  examples: [{
    id: exampleId('aud'),
    at: EXAMPLE_TIME,
    actor: { type: 'person', id: exampleId('per'), name: 'Ada Lovelace' },
    action: 'member.role_changed',
    target: { type: 'person', id: 'per_01jbx3q4r5s6t7v8w9x0y1z2a3' },
    ip: '203.0.113.7',
    userAgent: 'Mozilla/5.0',
    requestId: 'req_01jbx3m9k6t2v8w4y7z0a5c1d3',
    details: { from: 'viewer', to: 'editor' },
  }],
});

/**
 * Entries are compared as stored text (UTC, milliseconds), so `10:00:00Z` or `12:00:00+02:00` must
 * become `10:00:00.000Z` first; compared as given they would sort wrongly against stored times.
 */
function instant(value: string | undefined, field: string): string | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  // The date-time format lets through a few strings Date cannot place, such as a leap second.
  if (Number.isNaN(ms)) throw invalidRequest(`${field} is not a time this service can compare.`, { field });
  return new Date(ms).toISOString();
}

export const registerListAuditLog: RegisterRoute = (app, deps) =>
  app.get('/v1/audit-log', {
    config: { operation: 'auditLog.list', access: needs('audit:read') },
    schema: {
      summary: "The workspace's audit log, newest first",
      tags: ['audit'],
      querystring: Type.Object(
        {
          actor: Type.Optional(Type.String({ pattern: '^[a-z]+_[0-9a-z]{26}$', description: 'An actor id: a person, key or service account.' })),
          action: Type.Optional(Type.String({ pattern: '^[a-z_.]+\\*?$', maxLength: 100, description: 'An action like member.removed, or a prefix ending in * like member.*' })),
          since: Type.Optional(Timestamp),
          until: Type.Optional(Timestamp),
          ...Paging,
        },
        { additionalProperties: false },
      ),
      response: { 200: listOf(AuditEntry) },
    },
    handler: async (request) => {
      const { limit = 50, cursor, since, until, ...filters } = request.query;
      const rows = await listAudit(deps.db, inWorkspace(request).workspaceId, {
        ...filters,
        since: instant(since, 'querystring.since'),
        until: instant(until, 'querystring.until'),
        limit: limit + 1,
        before: decodeCursor(cursor, idPosition('aud')),
      });
      return page(rows, limit, (row) => row.id, deps.config.pageBytes);
    },
  });
