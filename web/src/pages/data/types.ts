/** The API's representations the data pages read (docs/design.md §6), as the dashboard sees them. */

export interface Collection {
  id: string;
  name: string;
  public: boolean;
  settings: { description: string };
  activeSchemaVersion: number | null;
  createdAt: string;
  updatedAt: string;
  trashedAt: string | null;
}

export type RecordData = Record<string, unknown>;

export interface RecordItem {
  id: string;
  collectionId: string;
  data: RecordData;
  schemaVersion: number | null;
  files: string[];
  createdAt: string;
  updatedAt: string;
  trashedAt: string | null;
}

export interface SchemaVersion {
  id: string;
  collectionId: string;
  version: number;
  state: 'draft' | 'active' | 'off';
  schema: Record<string, unknown>;
  createdAt: string;
}

export interface RecordIndex {
  name: string;
  fields: string[];
  unique: boolean;
}

export interface StoredFile {
  id: string;
  collectionId: string;
  name: string;
  size: number;
  contentType: string;
  sha256: string;
  createdAt: string;
  /** In the list only: how many records it is attached to. */
  attachedTo?: number;
}

/** The answer of POST …/import (src/http/routes/records/import-records.ts). */
export interface ImportReport {
  imported: number;
  rejected: { line: number; error: { code: string; message: string; details?: Record<string, unknown> } }[];
  rejectedCount: number;
}

/** The API path of a collection, or of something under it: collectionPath('leads', 'records'). */
export function collectionPath(name: string, ...rest: string[]): string {
  return ['/v1/collections', encodeURIComponent(name), ...rest.map(encodeURIComponent)].join('/');
}

/** The dashboard path of a collection's page: pagePath('leads', 'records'). */
export function pagePath(name: string, page?: 'records' | 'schemas' | 'indexes' | 'files'): string {
  return `/collections/${encodeURIComponent(name)}${page ? `/${page}` : ''}`;
}

/** Collection names (docs/design.md §2): the API checks them too; this only helps while typing. */
export const COLLECTION_NAME = /^[a-z][a-z0-9_]{0,62}$/;
export const COLLECTION_NAME_RULE = 'Lower-case letters, digits and _, starting with a letter; at most 63 characters.';

/** A record's data on one line, cut to `max` characters, to name it in a picker or a question. */
export function recordSummary(record: RecordItem, max: number): string {
  const text = JSON.stringify(record.data);
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

export function formatBytes(size: number): string {
  if (size < 1024) return `${size} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = size / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}
