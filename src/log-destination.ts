import pino from 'pino';

/**
 * Where the server's JSON log goes: stdout, written so that nothing the reader of stdout does can
 * stop the process.
 *
 * Pino's default destination buffers lines in memory and writes them asynchronously, which keeps
 * requests going while the reader is slow, but it had two faults when the reader stops reading
 * (a pipe or socket whose other end is alive and idle):
 * - the buffer grew without bound, a log line at a time;
 * - at exit pino flushes that buffer synchronously, retrying a full pipe every 100 ms for ever:
 *   `process.exit` never returned, and the process sat in a futex wait ignoring every SIGTERM
 *   (its exit was already under way), until SIGKILL.
 * Here the buffer holds at most LOG_BUFFER_BYTES (past it new lines are dropped until the reader
 * catches up, and the number dropped is logged then), and the flush at exit gives up after
 * FINAL_FLUSH_MS.
 */

/** Unwritten log the process may hold while stdout is not being read. */
const LOG_BUFFER_BYTES = 8 * 1024 * 1024;
/** How long the last flush, at exit, may wait for a reader that is not reading. */
const FINAL_FLUSH_MS = 1000;

export interface LogDestination {
  /** For the logger's `stream` option. */
  stream: pino.DestinationStream;
  /**
   * Writes out what the log still holds, waiting at most FINAL_FLUSH_MS for stdout, then ends
   * the process with `code`. Use it for every exit once the log is in use.
   */
  exit(code: number): never;
}

export function logDestination(fd = 1): LogDestination {
  // Until exit, a full pipe is retried (on a timer: nothing waits); at exit, until the deadline.
  let deadline = Number.POSITIVE_INFINITY;
  // Node makes stdout non-blocking (for a pipe or socket) only once process.stdout is first used.
  // Left blocking, the log's writes would wait in the kernel for a reader that may never come, and
  // no deadline below could end them; the compiled server touches stdout nowhere else before this.
  if (fd === 1) void process.stdout.fd;
  const stream = pino.destination({ dest: fd, sync: false, maxLength: LOG_BUFFER_BYTES, retryEAGAIN: () => Date.now() < deadline });
  let dropped = 0;
  stream.on('drop', () => {
    dropped += 1;
  });
  stream.on('drain', () => {
    if (dropped === 0) return;
    const line = JSON.stringify({ level: 40, time: Date.now(), msg: `the log could not be written fast enough; ${dropped} lines were dropped` });
    dropped = 0;
    stream.write(`${line}\n`);
  });
  // A write refused at exit (the deadline passed) must not become an uncaught 'error' event.
  stream.on('error', () => undefined);

  return {
    stream,
    exit(code) {
      deadline = Date.now() + FINAL_FLUSH_MS;
      try {
        stream.flushSync();
      } catch {
        // stdout is not being read: what is left of the log is lost, the exit is not.
      }
      // Pino's own exit hook skips a destroyed stream, so it cannot flush again without a bound.
      stream.destroy();
      process.exit(code);
    },
  };
}
