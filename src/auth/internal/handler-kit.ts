/**
 * What the endpoint handlers of handlers.ts and oauth-token.ts share: the headers of a token
 * response, and how a field is read. A leaf module, so neither of the two imports the other.
 */
import type { FwRequest } from '../../runtime/request/request.js'

export const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' }

/** A non-empty string input, else null. */
export function text(request: FwRequest, key: string): string | null {
  const value = request.input(key)
  return typeof value === 'string' && value !== '' ? value : null
}
