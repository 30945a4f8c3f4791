/**
 * The one rule for names whose values are credentials, wherever fw masks them: keys and header
 * lines of a logged error, JSON and form fields in its text (runtime/logger.ts), and the query
 * parameters of a connection URL shown in an error (redact-url.ts).
 */

// Names are compared lowercase without '-' and '_', whole for the short or ambiguous ones,
// anywhere for password, secret and token (accessToken, jwtSecret, password_hash, x-auth-token,
// libpq's sslpassword; a token_type is hidden too, which costs nothing).
const SECRET_NAME =
  /^(?:(?:proxy)?authorization|(?:set)?cookies?|passwd|pwd|(?:x)?apikey|privatekey|jwt|credentials?|sessionid|connectionstring|dsn)$|password|secret|token/

/**
 * Whether a value named `name` is a credential.
 * @example
 * isSecretName('X-Auth-Token') // true
 */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name.toLowerCase().replace(/[-_]/g, ''))
}
