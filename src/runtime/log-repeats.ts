/**
 * Server errors that repeat, logged once a minute: an outage (the database down, Redis gone)
 * fails every request the same way, and a line with a stack per request filled the log (33 MB in
 * 10 s at 2,500 requests/s). The first error of a kind is logged in full; the same kind within
 * REPEAT_MS after it is counted, and when that minute ends one line says how many there were.
 * The next one after it is logged in full again.
 */
import type { Logger } from './types.js'

export const REPEAT_MS = 60_000
// Kinds counted at once per logger; past this many (errors whose messages vary) each is logged.
const MAX_KINDS = 200

const kindsByLog = new WeakMap<Logger, Map<string, { skipped: number }>>()

/**
 * Logs `message` at error level, unless an error of `kind` was logged within REPEAT_MS: then it
 * is counted, and the count logged when that window ends.
 * @example
 * logRepeating(log, '503 The user store is unavailable', { err }, 'The user store is unavailable')
 */
export function logRepeating(
  log: Logger,
  kind: string,
  fields: Record<string, unknown>,
  message: string,
): void {
  const kinds = kindsOf(log)
  const seen = kinds.get(kind)
  if (seen !== undefined) {
    seen.skipped++
    return
  }
  log.error(fields, message)
  if (kinds.size >= MAX_KINDS) return
  const counted = { skipped: 0 }
  kinds.set(kind, counted)
  setTimeout(() => {
    kinds.delete(kind)
    if (counted.skipped > 0)
      log.error(
        // Which line they were like: 'Unhandled error (12 more like it ...)' alone did not say.
        // Its request id, not the kind, which holds the error's message (and maybe a secret).
        { repeated: counted.skipped, first_request_id: fields.request_id },
        `${message} (${counted.skipped} more like it in the ${REPEAT_MS / 1000} s after, not logged)`,
      )
  }, REPEAT_MS).unref()
}

function kindsOf(log: Logger): Map<string, { skipped: number }> {
  let kinds = kindsByLog.get(log)
  if (kinds === undefined) kindsByLog.set(log, (kinds = new Map()))
  return kinds
}
