import type { Reporter, TestModule } from 'vitest/node';

const SHOWN = 15;

/**
 * Prints the slowest test files at the end of every run, so that whoever makes the suite slower
 * sees where its time went (the suite's budget is ten minutes on two cores). A file's time is
 * the time of its tests and hooks plus its import.
 */
export default class SlowestFilesReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const timed = testModules.map((module) => {
      const { duration, collectDuration } = module.diagnostic();
      return { file: module.relativeModuleId, seconds: (duration + collectDuration) / 1000 };
    });
    if (timed.length < 2) return;
    timed.sort((a, b) => b.seconds - a.seconds);
    const lines = timed.slice(0, SHOWN).map(({ file, seconds }) => `  ${seconds.toFixed(1).padStart(6)} s  ${file}`);
    process.stdout.write(`\nThe ${Math.min(SHOWN, timed.length)} slowest test files:\n${lines.join('\n')}\n`);
  }
}
