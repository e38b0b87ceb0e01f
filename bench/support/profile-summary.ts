/**
 * Where a Plainbase server spent its CPU during each benchmark phase.
 *
 *   BENCH_CPU_PROF=/tmp/prof npm run bench:data
 *   node --import tsx bench/support/profile-summary.ts /tmp/prof/sqlite [rows]
 *
 * Reads the largest .cpuprofile in the directory (the main thread's; tsx's loader thread writes
 * a small one) and phases.json (written by the bench), and prints for each phase the busy share
 * and the self time by package or source file and by function. Phase windows are counted from
 * the spawn of the process, the profile from the start of V8: they agree to within the ~0.1 s
 * Node takes to boot, which is small next to a 10 s run.
 */
import fs from 'node:fs';
import path from 'node:path';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}
interface Phase {
  phase: string;
  from: number;
  to: number;
}

const IDLE = new Set(['(idle)', '(program)']);

function bucketOf(frame: CallFrame): string {
  const url = frame.url.replace(/^file:\/\/\/.*?\/(src|dist|node_modules|bench)\//, '$1/');
  if (url.startsWith('node_modules/')) return `pkg ${url.replace(/^node_modules\/((@[^/]+\/)?[^/]+).*/, '$1')}`;
  if (url.startsWith('node:')) return 'node core (http, streams, crypto, …)';
  if (url === '') return frame.functionName.startsWith('(') ? frame.functionName : `native ${frame.functionName}`;
  return url;
}

function top(map: Map<string, number>, total: number, rows: number): string[] {
  return [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, rows)
    .map(([key, value]) => `    ${((100 * value) / total).toFixed(1).padStart(5)}%  ${key}`);
}

function main(): void {
  const dir = process.argv[2];
  const rows = Number(process.argv[3] ?? 12);
  if (!dir) throw new Error('usage: profile-summary.ts <profile dir of one engine> [rows]');
  const profiles = fs.readdirSync(dir).filter((name) => name.endsWith('.cpuprofile'));
  if (profiles.length === 0) throw new Error(`no .cpuprofile in ${dir}`);
  const largest = profiles.map((name) => path.join(dir, name)).sort((a, b) => fs.statSync(b).size - fs.statSync(a).size)[0]!;
  const profile = JSON.parse(fs.readFileSync(largest, 'utf8')) as Profile;
  const phasesFile = path.join(dir, 'phases.json');
  const phases: Phase[] = fs.existsSync(phasesFile) ? (JSON.parse(fs.readFileSync(phasesFile, 'utf8')) as Phase[]) : [];
  phases.push({ phase: 'whole run', from: 0, to: Number.POSITIVE_INFINITY });

  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  // Sample i happened at the sum of the first i+1 deltas, in microseconds from the profile start.
  const at = new Float64Array(profile.samples.length);
  let clock = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    clock += profile.timeDeltas[i] ?? 0;
    at[i] = clock / 1000;
  }

  console.log(`profile ${largest}`);
  for (const { phase, from, to } of phases) {
    const byBucket = new Map<string, number>();
    const byFunction = new Map<string, number>();
    let total = 0;
    let busy = 0;
    for (let i = 0; i < profile.samples.length; i++) {
      if (at[i]! < from || at[i]! > to) continue;
      const weight = profile.timeDeltas[i + 1] ?? 0;
      const frame = frames.get(profile.samples[i]!)!;
      total += weight;
      if (IDLE.has(frame.functionName)) continue;
      busy += weight;
      const bucket = bucketOf(frame);
      byBucket.set(bucket, (byBucket.get(bucket) ?? 0) + weight);
      const name = `${frame.functionName || '(anonymous)'}  ${bucket}`;
      byFunction.set(name, (byFunction.get(name) ?? 0) + weight);
    }
    if (total === 0) continue;
    console.log(`\n${phase}: ${(total / 1e6).toFixed(1)} s profiled, main thread busy ${((100 * busy) / total).toFixed(0)}% (shares below are of the busy time)`);
    console.log('  by package or file:');
    console.log(top(byBucket, busy, rows).join('\n'));
    console.log('  by function:');
    console.log(top(byFunction, busy, rows).join('\n'));
  }
}

main();
