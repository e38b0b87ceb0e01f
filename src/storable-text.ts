/**
 * Text that both engines can store and compare: PostgreSQL text cannot hold NUL, and a lone
 * surrogate is not Unicode. Anything a caller sends into a query (filter strings, cursor values)
 * passes this check, so such input is a 400 on both engines instead of a driver error.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function unstorableTextReason(value: string): string | undefined {
  if (value.includes('\u0000')) return 'cannot contain the NUL character (\\u0000)';
  if (LONE_SURROGATE.test(value)) return 'cannot contain a lone surrogate (an unpaired \\uD800-\\uDFFF)';
  return undefined;
}
