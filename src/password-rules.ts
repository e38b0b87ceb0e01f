import { createRequire } from 'node:module';
import { invalidRequest, type AppError } from './errors.js';

/**
 * What a new password must be (docs/security.md), after NIST SP 800-63B: long enough, not blank,
 * not the person's email, not one of the passwords attackers try first; no rules about kinds of
 * characters. The common passwords are zxcvbn-ts's list (about 49,000, from leaked-password
 * corpora, all lower case), kept as one Set, built once per process at the first password checked:
 * about 4 MB of heap (measured with the package's other data, after a collection) and 40 ms, which
 * a server that never sees a new password (most of them, once set up) does not spend.
 */

export const PASSWORD_MIN_LENGTH = 10;

let commonPasswords: ReadonlySet<string> | undefined;
// Required, not imported: the check is synchronous, and a static import would load it at start.
const load = createRequire(import.meta.url);

function isCommonPassword(folded: string): boolean {
  commonPasswords ??= new Set((load('@zxcvbn-ts/language-common') as typeof import('@zxcvbn-ts/language-common')).dictionary['passwords-common']);
  return commonPasswords.has(folded);
}

export type PasswordProblem = 'too_short' | 'blank' | 'is_email' | 'common';

const MESSAGES: Record<PasswordProblem, string> = {
  too_short: `The password must be at least ${PASSWORD_MIN_LENGTH} characters long.`,
  blank: 'The password cannot be only spaces.',
  is_email: 'The password cannot be your email address or its name part.',
  common: 'This password is one of the most common passwords, which attackers try first; choose another.',
};

/** Why `password` may not be `email`'s new password, or null when it may. */
export function passwordProblem(password: string, email: string): PasswordProblem | null {
  // Compared as it is hashed (password.ts normalises to NFKC), and counted in characters, not UTF-16 units.
  const normalised = password.normalize('NFKC');
  if ([...normalised].length < PASSWORD_MIN_LENGTH) return 'too_short';
  if (normalised.trim() === '') return 'blank';
  const folded = normalised.trim().toLowerCase();
  const address = email.trim().toLowerCase();
  if (folded === address || folded === address.split('@')[0]) return 'is_email';
  if (isCommonPassword(folded)) return 'common';
  return null;
}

/** The rule a password breaks, in a sentence for people. */
export function describePasswordProblem(problem: PasswordProblem): string {
  return MESSAGES[problem];
}

/** Throws 400 INVALID_REQUEST naming the field and the rule when `password` breaks one. */
export function checkNewPassword(password: string, email: string, field = 'body.password'): void {
  const problem = passwordProblem(password, email);
  if (problem) throw newPasswordRefused(problem, field);
}

function newPasswordRefused(problem: PasswordProblem, field: string): AppError {
  return invalidRequest(MESSAGES[problem], { field, reason: problem });
}
