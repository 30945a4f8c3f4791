/**
 * How the kernel turns middleware refs into layers at boot: aliases (with parameters, chains of
 * r.alias), built-in and module factories, and the checks that name a bad one before any request.
 */
import type { Container } from './container.js'
import type { FwRequest } from './request/request.js'
import { FwError } from '../shared/errors.js'
import { BUILTIN_ALIASES, checkAlias, walkAlias } from '../shared/middleware-aliases.js'
import type { MiddlewareRef, RouteRecord } from '../shared/route-record.js'
import type { KernelServices, Logger, Middleware, MiddlewareFactory, Next } from './types.js'
import { thrownMessage } from '../shared/thrown.js'

/**
 * Warns about each string handler naming nothing bound once the providers have booted: a typo
 * ('UserControler@show') would otherwise show only as a 500 at every request to the route.
 */
export function warnUnbound(
  records: readonly RouteRecord[],
  kernel: { container: Container; log: Logger },
): void {
  // Once per key, naming its first route and how many there are: a controller left unbound in a
  // large app logged a line for every one of its routes (1,000 lines for 5 keys in 10,000 routes).
  const unbound = new Map<string, { route: string; handler: string; routes: number }>()
  for (const { handler, name, method, path } of records) {
    if (typeof handler !== 'string') continue
    const key = handler.split('@')[0]!
    const seen = unbound.get(key)
    if (seen !== undefined) seen.routes++
    else if (!kernel.container.has(key))
      unbound.set(key, { route: name ?? `${method} ${path}`, handler, routes: 1 })
  }
  for (const [key, { route, handler, routes }] of unbound) {
    kernel.log.warn(
      routes === 1 ? { route, handler } : { route, handler, routes },
      routes === 1
        ? `Nothing is bound to "${key}" in the container: the route answers 500 until something is`
        : `Nothing is bound to "${key}" in the container: its ${routes} routes answer 500 until something is`,
    )
  }
}

/**
 * Checks the parameters of a built-in alias (`verifySignedUrl:x`, `throttle:0,60`) as the
 * compiler does for the routes file's: those in the global lists or tagged in the container reach
 * the kernel unchecked. An alias the app implements itself (`replaced`) has rules of its own.
 */
export function checkBuiltinParams(ref: MiddlewareRef, replaced: (name: string) => boolean): void {
  if (typeof ref !== 'string') return
  const name = ref.split(':')[0]!
  if (!Object.hasOwn(BUILTIN_ALIASES, name) || replaced(name)) return
  const problem = checkAlias(ref, NO_ALIASES)
  if (problem !== null)
    throw new FwError('FW_MIDDLEWARE_INVALID', `Middleware ${problem}`, {
      hint: 'Fix the alias in the kernel options or the container, e.g. throttle:5,60.',
    })
}

const NO_ALIASES: ReadonlySet<string> = new Set()

/**
 * The layer of `ref`: a function as it is; an alias registered with r.alias as followAlias
 * resolves it (a function, or another alias string); else a built-in or module factory given the
 * parameters.
 */
export function resolveMiddleware(
  ref: MiddlewareRef,
  factories: Record<string, MiddlewareFactory>,
  aliases: Map<string, MiddlewareRef>,
  kernel: KernelServices,
): Middleware {
  if (typeof ref === 'function') return ref as Middleware
  const { target, params: given } = walkAlias(ref, aliases)
  // A function an alias names gets the use's parameters after `next`, as Laravel's handle():
  // r.alias('tenant', (req, next, id) => ...) used as 'tenant:acme'.
  if (typeof target === 'function') {
    const named = target as (
      request: FwRequest,
      next: Next,
      ...params: string[]
    ) => ReturnType<Middleware>
    // Named after the alias when it has no name of its own (an inline arrow, or the wrapper
    // here): the log of a layer that answers no response says `Middleware "tenant"`, not "A
    // middleware", which left an app with several to guess.
    const alias = ref.split(':', 1)[0]!
    if (given.length === 0) return namedAfter(named as Middleware, alias)
    return namedAfter((request, next) => named(request, next, ...given), named.name || alias)
  }
  const name = (target as string).split(':', 1)[0]!
  const params = given
  const factory = Object.hasOwn(factories, name) ? factories[name] : undefined
  if (typeof factory !== 'function') {
    throw new FwError('FW_MIDDLEWARE_INVALID', `Middleware alias "${name}" has no implementation`, {
      hint: "Pass its factory in the kernel's middleware option, or register it with r.alias(name, fn).",
    })
  }
  let layer: unknown
  try {
    layer = factory(params, kernel)
  } catch (error) {
    throw new FwError(
      'FW_MIDDLEWARE_INVALID',
      `Middleware "${ref}" failed to build: ${thrownMessage(error)}`,
      {
        hint: `Check the factory given for "${name}" (the kernel's middleware option).`,
        cause: error,
      },
    )
  }
  if (typeof layer !== 'function')
    throw new FwError(
      'FW_MIDDLEWARE_INVALID',
      `Middleware "${ref}": its factory returned ${layer === null ? 'null' : typeof layer}, not a middleware function`,
      {
        hint: `A factory returns (request, next) => response: middleware: { ${name}: (params) => (req, next) => next(req) }.`,
      },
    )
  return namedAfter(layer as Middleware, ref.split(':', 1)[0]!)
}

/** `layer`, named `name` when it has no name (unless frozen: Reflect does not throw then). */
function namedAfter(layer: Middleware, name: string): Middleware {
  if (layer.name === '') Reflect.defineProperty(layer, 'name', { value: name })
  return layer
}
