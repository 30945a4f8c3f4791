/**
 * URL helpers for handlers, bound to the kernel that booted last in this process (Laravel-style
 * helpers: import them anywhere instead of threading the kernel through); during a request of a
 * kernel with the request scope on, to that kernel.
 */
import type { PayloadMode } from './signed-url.js'
import type { Kernel } from './kernel.js'
import type { UrlParams, UrlQuery } from './types.js'
import { kernelScope } from './kernel-scope.js'

let current: Kernel | null = null

export function setCurrentKernel(kernel: Kernel): void {
  current = kernel
}

function kernel(): Kernel {
  // Only a kernel with requestScopeEnabled sets it: without the scope, no AsyncLocalStorage runs.
  const handling = kernelScope.getStore()
  if (handling !== undefined) return handling
  if (current === null) throw new Error('No fw kernel has booted in this process yet')
  return current
}

/** @example urlFor('v1.users.show', { id: 1 }) // '/api/v1/users/1' */
export function urlFor(
  name: string,
  params: UrlParams = {},
  query: UrlQuery = {},
  absolute: boolean | string = false,
): string {
  return kernel().urlFor(name, params, query, absolute)
}

/** @example signedUrlFor('demo.signed', { id: 1 }) */
export function signedUrlFor(
  name: string,
  params: UrlParams = {},
  query: UrlQuery = {},
  ttl: number | null = null,
  absolute = false,
  payloadMode: PayloadMode | null = null,
): string {
  return kernel().signer.signedUrlFor(name, params, query, ttl, absolute, payloadMode)
}

/** @example temporaryUrlFor('demo.signed', { id: 1 }, {}, 300) */
export function temporaryUrlFor(
  name: string,
  params: UrlParams = {},
  query: UrlQuery = {},
  ttl: number | null = null,
  absolute = false,
  payloadMode: PayloadMode | null = null,
): string {
  return kernel().signer.temporaryUrlFor(name, params, query, ttl, absolute, payloadMode)
}

/** @example temporaryUrlUntil('demo.signed', new Date(Date.now() + 60_000), { id: 1 }) */
export function temporaryUrlUntil(
  name: string,
  expiresAt: Date | number,
  params: UrlParams = {},
  query: UrlQuery = {},
  absolute = false,
  payloadMode: PayloadMode | null = null,
): string {
  return kernel().signer.temporaryUrlUntil(name, expiresAt, params, query, absolute, payloadMode)
}
