/**
 * Runs a list of middleware around a final step. Every `next` call is guarded: whatever the
 * downstream layers throw comes back as a rendered error response, so outer middleware always
 * see a response (and can still add their headers, e.g. the request id, to a 404).
 * This is the hot path: change with care and run `npm run bench`. The `next` functions are made
 * once, at boot, so a request allocates no closure per layer.
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
  // steps[i] runs layer i (steps[layers.length] runs the final step), each guarded.
  const steps: ((request: FwRequest) => Promise<FwResponse>)[] = new Array(layers.length + 1)
  steps[layers.length] = guarded(final, rescue)
  for (let i = layers.length - 1; i >= 0; i--) {
    const layer = layers[i]!
    const next = steps[i + 1]!
    steps[i] = guarded((request) => layer(request, next), rescue)
  }
  return steps[0]!
}

/**
 * `step` as a function that always resolves to a response: what it throws (or rejects with) is
 * rescued. Not an async function: a step that returns a promise gets one `.then`, a synchronous
 * one none, which saves two promises and a microtask per layer.
 */
function guarded(step: Step, rescue: Rescue): (request: FwRequest) => Promise<FwResponse> {
  return (request) => {
    let result: FwResponse | Promise<FwResponse>
    try {
      result = step(request)
    } catch (error) {
      return rescue(error, request)
    }
    if (result instanceof Promise) return result.then(undefined, (error: unknown) => rescue(error, request))
    return Promise.resolve(result)
  }
}
