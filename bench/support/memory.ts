import fs from 'node:fs';

export interface MemoryReading {
  /** VmHWM: the peak resident set size of the process so far, as the kernel counts it. */
  hwmKb: number;
  /** VmRSS: the resident set size now. */
  rssKb: number;
}

/** Reads VmHWM and VmRSS from /proc/<pid>/status; null when the process is gone. */
export function readMemory(pid: number): MemoryReading | null {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return null;
  }
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)\\s+kB`, 'm').exec(text)?.[1] ?? 0);
  return { hwmKb: field('VmHWM'), rssKb: field('VmRSS') };
}

export interface MemoryReport {
  peakHwmMb: number;
  maxRssMb: number;
  /** The highest VmRSS seen during each phase (import, create@10, …). */
  maxRssMbByPhase: Map<string, number>;
  samples: number;
}

/**
 * Samples a server's memory every `intervalMs` (200 ms by default) for the whole time it runs.
 * VmHWM is the kernel's own high-water mark, so a spike between two samples is not missed;
 * VmRSS per phase says where the peak happened.
 */
export class MemorySampler {
  private timer: NodeJS.Timeout | null = null;
  private peakHwmKb = 0;
  private maxRssKb = 0;
  private samples = 0;
  private phase = 'start';
  private readonly byPhase = new Map<string, number>();

  constructor(private readonly pid: number, private readonly intervalMs = 200) {}

  start(): this {
    this.sample();
    this.timer = setInterval(() => this.sample(), this.intervalMs);
    this.timer.unref();
    return this;
  }

  /** Names the phase the next samples belong to (and takes one sample for the previous). */
  setPhase(phase: string): void {
    this.sample();
    this.phase = phase;
  }

  sample(): void {
    const reading = readMemory(this.pid);
    if (!reading) return;
    this.samples += 1;
    this.peakHwmKb = Math.max(this.peakHwmKb, reading.hwmKb);
    this.maxRssKb = Math.max(this.maxRssKb, reading.rssKb);
    this.byPhase.set(this.phase, Math.max(this.byPhase.get(this.phase) ?? 0, reading.rssKb));
  }

  /** Takes a last sample (call it before stopping the process) and stops sampling. */
  stop(): MemoryReport {
    this.sample();
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    return this.report();
  }

  /** What was sampled so far; sampling goes on. */
  report(): MemoryReport {
    const mb = (kb: number) => kb / 1024;
    return {
      peakHwmMb: mb(this.peakHwmKb),
      maxRssMb: mb(this.maxRssKb),
      maxRssMbByPhase: new Map([...this.byPhase].map(([phase, kb]) => [phase, mb(kb)])),
      samples: this.samples,
    };
  }
}

/** CPU time (user + system) the process has used so far, in seconds; null when it is gone. */
export function readCpuSeconds(pid: number): number | null {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // Fields after the command name (which may hold spaces) start at field 3; utime and stime are 14 and 15.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/**
 * Waits until the process has used less than `idleShare` of a core for `quietSeconds` in a row
 * (or `timeoutSeconds` passed): work a request left behind (the webhook worker fanning out an
 * import's events) must not be measured as part of the next load. Returns how long it took and
 * the CPU time used meanwhile, or null when the process could not be read.
 */
export async function waitUntilIdle(
  pid: number,
  options: { idleShare?: number; quietSeconds?: number; timeoutSeconds?: number } = {},
): Promise<{ seconds: number; cpuSeconds: number; timedOut: boolean } | null> {
  const { idleShare = 0.1, quietSeconds = 2, timeoutSeconds = 600 } = options;
  const started = Date.now();
  const cpuAtStart = readCpuSeconds(pid);
  if (cpuAtStart === null) return null;
  let quietSince = Date.now();
  let last = cpuAtStart;
  let lastAt = Date.now();
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const now = Date.now();
    const cpu = readCpuSeconds(pid);
    if (cpu === null) return null;
    if ((cpu - last) / ((now - lastAt) / 1000) >= idleShare) quietSince = now;
    last = cpu;
    lastAt = now;
    const timedOut = now - started >= timeoutSeconds * 1000;
    if (now - quietSince >= quietSeconds * 1000 || timedOut) {
      // The quiet stretch at the end is waiting, not work.
      return { seconds: Math.max(0, (quietSince - started) / 1000), cpuSeconds: cpu - cpuAtStart, timedOut };
    }
  }
}

/** USER_HZ: 100 on every Linux build the benchmark targets. */
const CLOCK_TICKS = 100;

/** The 1-minute load average: how busy the machine was while a figure was taken. */
export function loadAverage(): number {
  try {
    return Number(fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
  } catch {
    return Number.NaN;
  }
}
