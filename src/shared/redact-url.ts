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
  return masked.replace(PARAM, (param, lead: string, name: string) =>
    isSecretName(name) ? `${lead}${name}=***` : param,
  )
}
