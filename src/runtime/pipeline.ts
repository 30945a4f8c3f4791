/**
 * Runs a list of middleware around a final step. Every `next` call is guarded: whatever the
 * downstream layers throw comes back as a rendered error response, so outer middleware always
 * see a response (and can still add their headers, e.g. the request id, to a 404).
 * This is the hot path: change with care and run `npm run bench`.
 */
import type { FwResponse } from './response.js'
import type { FwRequest } from './request/request.js'
import type { Middleware } from './types.js'

export type Step = (request: FwRequest) => FwResponse | Promise<FwResponse>
export type Rescue = (error: unknown, request: FwRequest) => Promise<FwResponse>

/**
 * Composes `layers` around `final` into one step.
 * @example
 * const run = compose([requestId, trace], handler, rescue)
 * const response = await run(request)
 */
export function compose(layers: readonly Middleware[], final: Step, rescue: Rescue): (request: FwRequest) => Promise<FwResponse> {
  const guard = async (step: Step, request: FwRequest): Promise<FwResponse> => {
    try {
      return await step(request)
    } catch (error) {
      return rescue(error, request)
    }
  }
  if (layers.length === 0) return (request) => guard(final, request)
  const dispatch = (index: number, request: FwRequest): Promise<FwResponse> => {
    if (index === layers.length) return guard(final, request)
    const layer = layers[index]!
    return guard((r) => layer(r, (next) => dispatch(index + 1, next)), request)
  }
  return (request) => dispatch(0, request)
}
