/**
 * The kernel's boot options checked and normalised: the matcher, and the service providers
 * (objects, or classes the kernel instantiates once).
 */
import { FwError } from '../shared/errors.js'
import type { ServiceProvider } from './kernel.js'

/** A provider class: the kernel makes one instance, with no arguments, at boot. */
export type ServiceProviderClass = new () => ServiceProvider

/**
 * Rejects a matcher other than the sharded one (spec: matcher).
 * @example
 * checkMatcher(options.matcher) // throws FW_SERVE_CONFIG for matcher: 'linear'
 */
export function checkMatcher(matcher: unknown): void {
  if (matcher === undefined || matcher === 'sharded') return
  throw new FwError('FW_SERVE_CONFIG', `Unknown matcher ${JSON.stringify(matcher)}`, {
    hint: "The only matcher is 'sharded' (the default): pass matcher: 'sharded' or leave it out.",
  })
}

/**
 * A service provider as given: an object, or a class instantiated here once, with no arguments.
 * @example
 * const providers = (options.serviceProviders ?? []).map(toProvider)
 */
export function toProvider(given: unknown, index: number): ServiceProvider {
  // Arrow functions and methods have no prototype: they cannot be classes.
  const provider: unknown =
    typeof given === 'function' && given.prototype !== undefined
      ? new (given as ServiceProviderClass)()
      : given
  const { register, boot } = (provider ?? {}) as Record<string, unknown>
  const hook = (value: unknown): boolean => value === undefined || typeof value === 'function'
  if (
    typeof provider === 'object' &&
    provider !== null &&
    hook(register) &&
    hook(boot) &&
    (register ?? boot) !== undefined
  )
    return provider as ServiceProvider
  throw new FwError(
    'FW_SERVE_CONFIG',
    `serviceProviders[${index}] is not a service provider (${describeProvider(given)})`,
    {
      hint: 'Pass an object with register(kernel) and/or boot(kernel), or a class of such objects.',
    },
  )
}

function describeProvider(given: unknown): string {
  if (given === null) return 'null'
  if (typeof given === 'function')
    return given.prototype === undefined
      ? 'a function, not a class'
      : 'a class without register() or boot()'
  return typeof given === 'object' ? 'an object without register() or boot()' : `a ${typeof given}`
}
