import { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { BACKUP_NAME, checkBackupOperator, listBackups, readBackup, startRequestedBackup } from '../../../modules/backups/backup-runs.js';
import { AppError } from '../../../errors.js';
import { PERSON } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { signedInPerson } from '../../auth.js';
import { decodeCursor, page } from '../../cursor.js';
import { requestMeta } from '../../request-meta.js';
import { listOf, Paging, ResponseHeaders } from '../../schemas.js';
import { contentDisposition } from '../files/content-headers.js';

/** Checked before the request is validated, so that everyone else learns nothing, not even what a name looks like. */
const operatorOnly = (deps: Parameters<RegisterRoute>[1]) => async (request: FastifyRequest) => {
  await checkBackupOperator(deps.db, signedInPerson(request));
};

const WHO = 'Only the first owner of this Plainbase (the person made at setup), and only with a session: a backup holds every workspace. See docs/backups.md.';

const BackupName = Type.String({
  pattern: BACKUP_NAME.source,
  maxLength: 64,
  description: 'plainbase-<the time it was started or scheduled for>.tar',
  examples: ['plainbase-2026-11-29T03-00-00-000Z.tar'],
});

const Backup = Type.Object(
  {
    name: BackupName,
    size: Type.Integer({ minimum: 0, description: 'The archive\'s size in bytes.' }),
    createdAt: Type.String({ format: 'date-time', description: 'When it was started (or scheduled for): the time in its name.' }),
  },
  { examples: [{ name: 'plainbase-2026-11-29T03-00-00-000Z.tar', size: 14_680_064, createdAt: '2026-11-29T03:00:00.000Z' }] },
);

const StartedBackup = Type.Object(
  {
    name: BackupName,
    startedAt: Type.String({ format: 'date-time' }),
    status: Type.Literal('running', { description: 'The archive appears in GET /v1/backups once written whole.' }),
  },
  { examples: [{ name: 'plainbase-2026-11-29T10-15-00-000Z.tar', startedAt: '2026-11-29T10:15:00.000Z', status: 'running' }] },
);

export const registerListBackups: RegisterRoute = (app, deps) =>
  app.get('/v1/backups', {
    config: { operation: 'backups.list', access: PERSON },
    schema: {
      summary: 'The backups kept (scheduled and asked for), newest first',
      description: WHO,
      tags: ['backups'],
      querystring: Type.Object({ ...Paging }, { additionalProperties: false }),
      response: { 200: listOf(Backup) },
    },
    preValidation: operatorOnly(deps),
    handler: async (request) => {
      const { limit = 50, cursor } = request.query;
      const after = decodeCursor(cursor, (position) => BACKUP_NAME.test(position));
      const backups = (await listBackups(deps)).filter((backup) => after === undefined || backup.name < after);
      return page(backups.slice(0, limit + 1), limit, (backup) => backup.name, deps.config.pageBytes);
    },
  });

export const registerStartBackup: RegisterRoute = (app, deps) =>
  app.post('/v1/backups', {
    config: { operation: 'backups.start', access: PERSON },
    schema: {
      summary: 'Start a backup now; it is written in the background',
      description: `${WHO} Answers 202 with the name the archive will have; 409 CONFLICT (details.running) while another backup runs in any process.`,
      tags: ['backups'],
      body: Type.Optional(Type.Object({}, { additionalProperties: false, examples: [{}] })),
      response: { 202: StartedBackup },
    },
    preValidation: operatorOnly(deps),
    handler: async (request, reply) => {
      const started = await startRequestedBackup(deps, signedInPerson(request), requestMeta(request));
      started.done.then(
        (summary) => app.log.info({ backup: started.name, bytes: summary.bytes }, 'took the backup asked for'),
        (error: unknown) => app.log.error({ err: error, backup: started.name }, 'the backup asked for failed'),
      );
      return reply.status(202).send({ name: started.name, startedAt: started.startedAt, status: 'running' as const });
    },
  });

export const registerDownloadBackup: RegisterRoute = (app, deps) =>
  app.get('/v1/backups/:name/content', {
    config: { operation: 'backups.download', access: PERSON },
    schema: {
      summary: 'A backup archive (a tar), streamed',
      description: `${WHO} Restore it with plainbase restore.`,
      tags: ['backups'],
      params: Type.Object({ name: BackupName }, { additionalProperties: false }),
      response: {
        200: {
          description: 'The archive.',
          headers: { 'Content-Disposition': ResponseHeaders.contentDisposition },
          content: { 'application/x-tar': { schema: { type: 'string', format: 'binary' } } },
        },
      },
    },
    preValidation: operatorOnly(deps),
    handler: async (request, reply) => {
      const archive = await readBackup(deps, request.params.name);
      if (!archive) throw new AppError('NOT_FOUND', 'No such backup.');
      reply.headers({
        'content-type': 'application/x-tar',
        'content-length': String(archive.size),
        'content-disposition': contentDisposition('attachment', request.params.name),
        'cache-control': 'private, no-store',
        'x-content-type-options': 'nosniff',
      });
      // HEAD answers the headers alone; Fastify would read an opened stream to its end to drop it.
      if (request.method === 'HEAD') {
        archive.content.destroy();
        return reply.send(Readable.from([]) as never);
      }
      return reply.send(archive.content as never);
    },
  });
