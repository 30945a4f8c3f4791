/**
 * The request scope (KernelOptions.requestScopeEnabled): the request as the running layer
 * (middleware or handler) received it, kept in AsyncLocalStorage.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import type { Kernel } from './kernel.js'
import type { FwRequest } from './request/request.js'
import type { Middleware } from './types.js'

// Each layer runs in a scope of its own, so after `await next(request)` a middleware sees its own
// request again.
export const requestScope = new AsyncLocalStorage<FwRequest>()

/**
 * The kernel handling the current request, with the request scope on: the URL helpers (urlFor,
 * signedUrlFor…) use it rather than the kernel that booted last, so that two kernels in one
 * process (or a request still running on the kernel a `fw serve --watch` reload replaced) each
 * link to and sign for their own routes, with their own keys.
 */
export const kernelScope = new AsyncLocalStorage<Kernel>()

/**
 * Whether a kernel with the request scope on has booted in this process: until then no request
 * can be inside a scope, and a kernel without it asks nothing of AsyncLocalStorage per request.
 */
export const scopes = { inUse: false }

/**
 * The request being handled, as the current middleware or handler received it, when
 * requestScopeEnabled is on; undefined outside a request.
 * @example
 * const log = (msg: string) => console.log(currentRequest()?.getAttribute('request_id'), msg)
 */
export function currentRequest(): FwRequest | undefined {
  return requestScope.getStore()
}

/** container.get('request') with the request scope on: the request being handled. */
export function requestInScope(): FwRequest {
  const request = requestScope.getStore()
  if (request === undefined)
    throw new Error('No request is being handled: container.get("request") works only during one')
  return request
}

/** `layer` run in a request scope of the request it receives (see currentRequest()). */
export function inScope(layer: Middleware): Middleware {
  const scoped: Middleware = (request, next) => requestScope.run(request, layer, request, next)
  // The pipeline names a middleware that answers no response after its function name.
  Object.defineProperty(scoped, 'name', { value: layer.name })
  return scoped
}
