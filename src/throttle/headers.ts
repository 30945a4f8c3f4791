/**
 * Rate-limit response headers. Always the `X-RateLimit-*` trio (and `Retry-After` on 429); with
 * `standardHeaders: true` (or 'draft-6', the default) also `RateLimit-Limit/-Remaining/-Reset`; with
 * 'draft-8' the IETF draft's structured `RateLimit-Policy` and `RateLimit` fields instead, one
 * list member per stacked limit (draft-ietf-httpapi-ratelimit-headers-08..10).
 * `X-RateLimit-Reset` is Unix seconds; `Retry-After` and the standard resets are seconds from now;
 * all of one response name the same instant (see `decide`).
 */
import type { HeaderMap } from '../runtime/http-error.js'
import type { ThrottleDecision, ThrottleRule } from './limiter.js'

export type StandardHeaders = boolean | 'draft-6' | 'draft-8'

/** One limit that ran for a request: its rule, what it decided, and its policy name. */
export interface AppliedLimit {
  rule: ThrottleRule
  decision: ThrottleDecision
  /** The draft-8 policy name: 'global', 'group' or 'route' (suffixed when repeated). */
  policy: string
}

/**
 * Headers of a response that passed every limit; the `X-RateLimit-*` and draft-6 fields report
 * the limit closest to exhaustion, draft-8 lists them all.
 * @example
 * successHeaders([{ rule, decision, policy: 'route' }], false) // { 'x-ratelimit-limit': '5', ... }
 */
export function successHeaders(
  applied: readonly AppliedLimit[],
  standard: StandardHeaders,
): HeaderMap {
  const tightest = closestToExhaustion(applied)
  const headers = legacy(tightest.decision)
  if (standard === true || standard === 'draft-6') Object.assign(headers, draft6(tightest.decision))
  if (standard === 'draft-8') Object.assign(headers, draft8(applied))
  return headers
}

/**
 * Headers of a 429, of the limit that keeps the request out longest (see `refuse` in middleware.ts).
 * @example
 * deniedHeaders({ rule, decision, policy: 'route' }, false) // { 'retry-after': '30', 'x-ratelimit-remaining': '0', ... }
 */
export function deniedHeaders(denied: AppliedLimit, standard: StandardHeaders): HeaderMap {
  const headers: HeaderMap = {
    'retry-after': String(denied.decision.retryAfterSeconds),
    ...legacy(denied.decision),
  }
  if (standard === true || standard === 'draft-6') Object.assign(headers, draft6(denied.decision))
  if (standard === 'draft-8') Object.assign(headers, draft8([denied]))
  return headers
}

/** The lowest remaining count; on a tie, the one that takes longer to reset. */
export function closestToExhaustion(applied: readonly AppliedLimit[]): AppliedLimit {
  let best = applied[0]!
  for (const limit of applied) {
    const a = limit.decision
    const b = best.decision
    if (
      a.remaining < b.remaining ||
      (a.remaining === b.remaining && a.resetAfterSeconds > b.resetAfterSeconds)
    )
      best = limit
  }
  return best
}

function legacy(decision: ThrottleDecision): HeaderMap {
  return {
    'x-ratelimit-limit': String(decision.limit),
    'x-ratelimit-remaining': String(decision.remaining),
    'x-ratelimit-reset': String(decision.resetSeconds),
  }
}

function draft6(decision: ThrottleDecision): HeaderMap {
  return {
    'ratelimit-limit': String(decision.limit),
    'ratelimit-remaining': String(decision.remaining),
    'ratelimit-reset': String(decision.resetAfterSeconds),
  }
}

function draft8(applied: readonly AppliedLimit[]): HeaderMap {
  const policies = applied.map(
    (a) => `"${a.policy}";q=${a.rule.max};w=${Math.ceil(a.rule.windowMs / 1000)}`,
  )
  const states = applied.map(
    (a) => `"${a.policy}";r=${a.decision.remaining};t=${a.decision.resetAfterSeconds}`,
  )
  return { 'ratelimit-policy': policies.join(', '), ratelimit: states.join(', ') }
}
