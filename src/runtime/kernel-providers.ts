/**
 * The kernel's boot options checked and normalised: their names, the matcher, and the service
 * providers (objects, or classes the kernel instantiates once).
 */
import { FwError } from '../shared/errors.js'
import type { Kernel, KernelOptions, ServiceProvider } from './kernel.js'
import { thrownMessage } from '../shared/thrown.js'
import { checkOptions } from '../shared/option-names.js'
import { KERNEL_OPTIONS } from './kernel-options.js'
import { checkRequestOptions } from './request/options.js'

/** A provider class: the kernel makes one instance, with no arguments, at boot. */
export type ServiceProviderClass = new () => ServiceProvider

/**
 * Refuses, at boot, an option name Kernel.boot does not know (from plain JavaScript a typo left
 * the option off without a word), naming the nearest one; `request` and its `limits` too.
 * @example
 * checkOptionNames({ routeCache, register, requestScopeEnbled: true })
 * // FwError: Kernel.boot(): unknown option `requestScopeEnbled` — did you mean `requestScopeEnabled`?
 */
export function checkOptionNames(options: KernelOptions): void {
  const fail = (message: string): FwError => new FwError('FW_SERVE_CONFIG', message)
  checkOptions('Kernel.boot()', options, KERNEL_OPTIONS, fail)
  checkRequestOptions('Kernel.boot() request', options.request, fail)
}

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
  let provider: unknown = given
  if (typeof given === 'function' && given.prototype !== undefined) {
    try {
      provider = new (given as ServiceProviderClass)()
    } catch (error) {
      throw providerFailed(index, given, 'its constructor', error)
    }
  }
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

/**
 * Runs `hook` of the provider at `index`, if it has one. What it throws or rejects with becomes
 * a boot error naming the provider and the hook, the original as its cause.
 * @example
 * for (const [i, provider] of providers.entries()) await runProviderHook(provider, 'boot', i, kernel)
 */
export async function runProviderHook(
  provider: ServiceProvider,
  hook: 'register' | 'boot',
  index: number,
  kernel: Kernel,
): Promise<void> {
  const run = provider[hook]
  if (run === undefined) return
  // A hook that never settles (a connection that never answers) hung the boot without a word:
  // past PROVIDER_SLOW_MS the log names it, and the boot keeps waiting.
  const slow = setTimeout(() => {
    kernel.log.warn(
      { provider: index, hook },
      `serviceProviders[${index}]${nameOf(provider)} has not finished ${hook}() after ${PROVIDER_SLOW_MS / 1000} s: the kernel waits for it`,
    )
  }, PROVIDER_SLOW_MS)
  slow.unref()
  try {
    await run.call(provider, kernel)
  } catch (error) {
    throw providerFailed(index, provider, `${hook}()`, error)
  } finally {
    clearTimeout(slow)
  }
}

export const PROVIDER_SLOW_MS = 10_000

/** ` (ClassName)` of a provider, or '' for a plain object. */
function nameOf(provider: unknown): string {
  const named = typeof provider === 'function' ? provider : (provider as object).constructor
  return typeof named?.name === 'string' && named.name !== 'Object' ? ` (${named.name})` : ''
}

function providerFailed(index: number, provider: unknown, where: string, error: unknown): FwError {
  const reason = thrownMessage(error)
  return new FwError(
    'FW_SERVE_CONFIG',
    `serviceProviders[${index}]${nameOf(provider)} failed in ${where}: ${reason}`,
    { cause: error },
  )
}
