import { expect } from 'vitest';
import { PlainbaseError } from '../../sdk/src/index.js';

/** What a rejected SDK call was rejected with; a failure when it was not a PlainbaseError, or did not reject. */
export async function rejection(promise: Promise<unknown>): Promise<PlainbaseError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(PlainbaseError);
    return error as PlainbaseError;
  }
  throw new Error('expected a PlainbaseError, but the call succeeded');
}
