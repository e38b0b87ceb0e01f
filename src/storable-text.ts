/**
 * Text that both engines can store and compare: PostgreSQL text cannot hold NUL, and a lone
 * surrogate is not Unicode. Anything a caller sends into a query (filter strings, cursor values)
 * passes this check, so such input is a 400 on both engines instead of a driver error.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const UNSTORABLE = new RegExp(`\\u0000|${LONE_SURROGATE.source}`, 'g');

export function unstorableTextReason(value: string): string | undefined {
  if (value.includes('\u0000')) return 'cannot contain the NUL character (\\u0000)';
  if (LONE_SURROGATE.test(value)) return 'cannot contain a lone surrogate (an unpaired \\uD800-\\uDFFF)';
  return undefined;
}

/**
 * The text with what neither engine can store (NUL, lone surrogates) replaced by U+FFFD, the
 * character a UTF-8 decoder already puts in place of bytes that are not UTF-8. For text that does
 * not come from a caller's request, so that refusing it is no answer (a webhook receiver's reply).
 */
export function toStorableText(value: string): string {
  return value.replace(UNSTORABLE, '\uFFFD');
}
