/**
 * The records both servers hold: 100 statuses (s0..s99) spread evenly, so a filter on one
 * status matches 1% of the collection (10,000 of 1,000,000).
 */
export const STATUSES = 100;
export const LIST_STATUS = 's42';

export interface BenchRecord {
  status: string;
  n: number;
  name: string;
}

export function benchRecord(i: number): BenchRecord {
  return { status: `s${i % STATUSES}`, n: i, name: `record ${i} of the benchmark` };
}

/** The records as NDJSON, a few thousand lines per chunk. */
export function* ndjsonChunks(count: number, linesPerChunk = 2000): Generator<string> {
  for (let start = 0; start < count; start += linesPerChunk) {
    const end = Math.min(count, start + linesPerChunk);
    let chunk = '';
    for (let i = start; i < end; i++) chunk += `${JSON.stringify(benchRecord(i))}\n`;
    yield chunk;
  }
}

/** The body of one create request; status "new" keeps created records out of the list filter. */
export const createBody = JSON.stringify({ data: { status: 'new', n: -1, name: 'created by the benchmark' } });
