/**
 * The one rule for names whose values are credentials, wherever fw masks them: keys and header
 * lines of a logged error, JSON and form fields in its text (runtime/logger.ts), the query
 * parameters of a connection URL shown in an error (redact-url.ts) and of a request target in the
 * access log (`isSecretParam`).
 */

// Names are compared lowercase without '-' and '_', whole for the short or ambiguous ones,
// anywhere for password, secret, token, signature and credential (accessToken, jwtSecret,
// password_hash, x-auth-token, libpq's sslpassword, the X-Amz-Signature and X-Goog-Credential of
// a pre-signed URL; a token_type is hidden too, which costs nothing).
const SECRET_NAME =
  /^(?:(?:proxy)?authorization|(?:set)?cookies?|passwd|pwd|(?:x)?apikey|privatekey|jwt|sessionid|connectionstring|dsn)$|password|secret|token|signature|credential/

// Query parameters that are credentials only there: a signed URL's `_sig` and an Azure SAS `sig`
// (each opens the URL to whoever has it), and an OAuth authorization `code` (traded for a
// token). Elsewhere `code` is an error's (ECONNREFUSED), which a log must show.
const SECRET_PARAM = /^(?:_?sig|code)$/

/**
 * Whether a value named `name` is a credential.
 * @example
 * isSecretName('X-Auth-Token') // true
 */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name.toLowerCase().replace(/[-_]/g, ''))
}

/**
 * Whether a query parameter named `name` (decoded) carries a credential: one `isSecretName`
 * takes, a signed URL's `_sig`, an Azure SAS `sig`, an OAuth `code`. Any case.
 * @example
 * isSecretParam('X-Amz-Signature') // true
 */
export function isSecretParam(name: string): boolean {
  return SECRET_PARAM.test(name.toLowerCase()) || isSecretName(name)
}
