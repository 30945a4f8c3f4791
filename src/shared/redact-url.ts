/**
 * A connection URL as it may be shown in an error: its credentials masked. A password can hold
 * `/`, `@`, `?` or `#` unencoded, and a URL can be malformed (`postgres:/user:pw@host`, no `//`),
 * so no URL parser decides where they end: everything between the scheme and the last `@` is
 * masked, and so is the value of a query parameter that names a secret (`sslpassword=`).
 */

import { isSecretName } from './secret-names.js'

// A query parameter: its name is read by isSecretName (libpq's sslpassword, an auth_token).
const PARAM = /([?&])([^=&#]{1,64})=[^&#]*/g

/**
 * @example
 * redactUrl('postgres://app:pa/ss@db/x?sslpassword=s') // 'postgres://***@db/x?sslpassword=***'
 */
export function redactUrl(url: string): string {
  const at = url.lastIndexOf('@')
  const scheme = /^[a-z][a-z0-9+.-]*:(?:\/\/)?/i.exec(url)?.[0] ?? ''
  const masked = at === -1 ? url : `${scheme}***${url.slice(at)}`
  return maskSecretParams(masked, '***')
}

/**
 * `url` with the value of each query parameter `isSecret` names a credential replaced by `mask`
 * (the access log's request targets too).
 * @example
 * maskSecretParams('/a?api_key=k&page=2', '[Redacted]') // '/a?api_key=[Redacted]&page=2'
 */
export function maskSecretParams(
  url: string,
  mask: string,
  isSecret: (name: string) => boolean = isSecretName,
): string {
  return url.replace(PARAM, (param, lead: string, name: string) =>
    isSecret(name) ? `${lead}${name}=${mask}` : param,
  )
}
