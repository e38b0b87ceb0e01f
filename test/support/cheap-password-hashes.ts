/**
 * For the service and CLI processes the tests start: scrypt at N=2^10 instead of 2^15, as the
 * in-process harness hashes (support/harness.ts), since the real cost takes 150 ms a sign-in.
 * test/passwords.test.ts keeps the real cost and checks that it stays the default.
 */
export const CHEAP_PASSWORD_HASHES = { PLAINBASE_TEST_PASSWORD_HASH_COST: '10' } as const;
