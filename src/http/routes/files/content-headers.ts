import { withoutFormatCharacters } from '../../../modules/files/files.js';

/**
 * How a file's content is answered over HTTP: which types a browser may show in place, the
 * Content-Disposition, and byte ranges (RFC 9110 §14).
 */

/**
 * Types a browser shows without running anything in them. Every other type (HTML, SVG,
 * JavaScript, XML, and whatever is not known) is served as an attachment, so a file uploaded to
 * a collection can never run as a page of this service's origin.
 */
const INLINE_TYPES = new Set([
  'image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif', 'image/bmp', 'image/x-icon', 'image/vnd.microsoft.icon',
  'audio/mpeg', 'audio/ogg', 'audio/wav', 'audio/webm', 'audio/aac', 'audio/flac', 'audio/mp4',
  'video/mp4', 'video/webm', 'video/ogg',
  'text/plain', 'text/csv', 'application/json', 'application/pdf',
]);

export function mediaTypeOf(contentType: string): string {
  return contentType.split(';')[0]!.trim().toLowerCase();
}

export function servedInline(contentType: string): boolean {
  return INLINE_TYPES.has(mediaTypeOf(contentType));
}

/**
 * RFC 6266: an ASCII `filename` for old clients (anything else, quotes and backslashes become _)
 * and the name as UTF-8 in `filename*`. Control characters become _ and format characters (a
 * right-to-left override) go, as at upload: names stored before uploads removed them must not
 * reach a browser's save dialog either.
 */
export function contentDisposition(kind: 'inline' | 'attachment', storedName: string): string {
  const name = withoutFormatCharacters(storedName).replace(/\p{Cc}/gu, '_') || 'file';
  const ascii = name.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

export type RangeAnswer =
  | { kind: 'whole' }
  | { kind: 'part'; start: number; end: number }
  | { kind: 'unsatisfiable' };

const RANGE_SPEC = /^(\d*)-(\d*)$/;

/**
 * The one byte range a Range header asks for. Another unit, or several ranges (not supported),
 * answers the whole content, as RFC 9110 allows; a malformed or unsatisfiable byte range is 416.
 * Positions may have any number of digits: a last position past the end means the end, and a
 * suffix longer than the content means all of it (RFC 9110 §14.1.2), so
 * `bytes=0-99999999999999999999` is the whole content as a 206. Numbers that large lose
 * precision as doubles, but only in digits that compare past any real size.
 */
export function parseRange(header: string | undefined, size: number): RangeAnswer {
  if (header === undefined) return { kind: 'whole' };
  const equals = header.indexOf('=');
  if (equals < 0 || header.slice(0, equals).trim().toLowerCase() !== 'bytes') return { kind: 'whole' };
  const spec = header.slice(equals + 1).replace(/\s+/g, '');
  if (spec.includes(',')) return { kind: 'whole' };
  const match = RANGE_SPEC.exec(spec);
  if (!match || (match[1] === '' && match[2] === '')) return { kind: 'unsatisfiable' };
  if (match[1] === '') {
    // bytes=-N: the last N bytes.
    const suffix = Number(match[2]);
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'part', start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (start >= size || (match[2] !== '' && Number(match[2]) < start)) return { kind: 'unsatisfiable' };
  return { kind: 'part', start, end };
}

/** Whether a conditional header (If-None-Match, If-Range) names this strong ETag. */
export function matchesEtag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(',').some((tag) => {
    const trimmed = tag.trim();
    return trimmed === '*' || trimmed.replace(/^W\//, '') === etag;
  });
}
