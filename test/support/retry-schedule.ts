import type { ManualClock } from '../../src/clock.js';
import { RETRY_GAPS_SECONDS } from '../../src/delivery/schedule.js';
import type { DeliveryWorker } from '../../src/worker/delivery-worker.js';

/**
 * Every attempt of the deliveries pending now, along the whole retry schedule: the first at once,
 * then one after each gap (8 in all), so that a delivery whose receiver keeps failing ends dead.
 */
export async function attemptAlongSchedule(worker: DeliveryWorker, clock: ManualClock): Promise<void> {
  await worker.drain();
  for (const gap of RETRY_GAPS_SECONDS) {
    clock.advance(gap * 1000);
    await worker.drain();
  }
}
