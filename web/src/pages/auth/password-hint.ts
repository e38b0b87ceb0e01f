/** What the service asks of a new password (docs/security.md), said once for every form that sets one. */
export const PASSWORD_HINT = 'At least 10 characters; not only spaces, not your email, not a common password. A few unrelated words make a good one.';
