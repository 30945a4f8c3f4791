/**
 * Server errors that repeat, logged once a minute: an outage (the database down, Redis gone)
 * fails every request the same way, and a line with a stack per request filled the log (33 MB in
 * 10 s at 2,500 requests/s). The first error of a kind is logged in full; the same kind again
 * within REPEAT_MS is counted, and the next one logged after that says how many were left out.
 */
import type { Logger } from './types.js'

export const REPEAT_MS = 60_000
// Kinds remembered per logger; past this many (errors whose messages vary) all are forgotten.
const MAX_KINDS = 200

interface Kind {
  until: number
  skipped: number
}

const kindsByLog = new WeakMap<Logger, Map<string, Kind>>()

/**
 * How many errors of `kind` were left out since the last one `log` logged (0 for the first), or
 * null when this one is to be left out.
 * @example
 * const skipped = repeatsOf(log, '503 The user store is unavailable')
 */
export function repeatsOf(log: Logger, kind: string, now = Date.now()): number | null {
  let kinds = kindsByLog.get(log)
  if (kinds === undefined) kindsByLog.set(log, (kinds = new Map()))
  const seen = kinds.get(kind)
  if (seen !== undefined && now < seen.until) {
    seen.skipped++
    return null
  }
  if (seen === undefined && kinds.size >= MAX_KINDS) kinds.clear()
  kinds.set(kind, { until: now + REPEAT_MS, skipped: 0 })
  return seen?.skipped ?? 0
}
