/**
 * Vary, merged: what middleware that make a response depend on a request header (negotiation,
 * CORS) add to it, so that a shared cache never gives one client's answer to another.
 */
import type { FwResponse } from './response.js'

/**
 * `response` with `names` in its Vary, added to those there (each once, case aside); a `*` stays.
 * @example
 * withVary(json(data).withHeader('vary', 'Accept'), ['Origin']).header('vary') // 'Accept, Origin'
 */
export function withVary(response: FwResponse, names: readonly string[]): FwResponse {
  const vary = response.header('vary')
  if (vary === undefined || vary.trim() === '') return response.withHeader('vary', names.join(', '))
  const listed = vary.split(',').map((field) => field.trim().toLowerCase())
  if (listed.includes('*')) return response
  const missing = names.filter((name) => !listed.includes(name.toLowerCase()))
  return missing.length === 0
    ? response
    : response.withHeader('vary', [vary, ...missing].join(', '))
}
