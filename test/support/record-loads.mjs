// Preloaded into a child process (node --import this-file) to write the URL of every module it
// loads through `import`, one a line, to the file named by RECORD_LOADS_TO: test/release.test.ts
// reads it to see what the service loads at start and what it leaves for later. Plain JavaScript
// because the child runs plain node, without tsx.
import { appendFileSync } from 'node:fs';
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';

// This file runs twice: in the program's thread, where it registers itself as loader hooks, and
// in the hooks' own thread, where only the exports below matter.
if (isMainThread) register(import.meta.url, { data: process.env.RECORD_LOADS_TO });

let file = null;

export function initialize(data) {
  file = data;
}

export async function load(url, context, nextLoad) {
  if (file) appendFileSync(file, `${url}\n`);
  return nextLoad(url, context);
}
