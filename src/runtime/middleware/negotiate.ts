/**
 * The negotiation middleware (alias `negotiate`, or `negotiate:en,fr` to name the locales the app
 * has): sets `negotiated.type`, `negotiated.charset` and `locale` from Accept, Accept-Charset and
 * Accept-Language, using negotiator.
 */
import Negotiator from 'negotiator'
import { LANGUAGE_TAG } from '../../shared/middleware-aliases.js'
import type { Middleware } from '../types.js'

export interface NegotiationOptions {
  types: string[]
  charsets: string[]
  /** The locales the app has; empty: any well-formed language tag the client prefers. */
  locales: string[]
  /** The locale when none of the client's is acceptable (default: the first of `locales`, else 'en'). */
  fallbackLocale?: string
}

export const DEFAULT_NEGOTIATION: NegotiationOptions = {
  types: ['application/json', 'text/html', 'text/plain'],
  charsets: ['utf-8', 'iso-8859-1'],
  locales: [],
}

/** `negotiate:en,fr` → the locales `en` and `fr`. */
export function negotiateAlias(params: readonly string[]): Middleware {
  return negotiate({ ...DEFAULT_NEGOTIATION, locales: [...params] })
}

/**
 * @example
 * negotiate({ ...DEFAULT_NEGOTIATION, locales: ['en', 'fr', 'de'] })
 */
export function negotiate(options: NegotiationOptions = DEFAULT_NEGOTIATION): Middleware {
  const fallback = options.fallbackLocale ?? options.locales[0] ?? 'en'
  return (request, next) => {
    const negotiator = new Negotiator({
      headers: {
        accept: request.getHeaderLine('accept') || undefined,
        'accept-charset': request.getHeaderLine('accept-charset') || undefined,
        'accept-language': request.getHeaderLine('accept-language') || undefined,
      },
    })
    // One derived request, not three.
    const derived = request.withAttributes({
      'negotiated.type': negotiator.mediaType(options.types) ?? null,
      'negotiated.charset': negotiator.charset(options.charsets) ?? null,
      locale: localeOf(negotiator, options.locales) ?? fallback,
    })
    return next(derived)
  }
}

/**
 * The best of `locales` for the client; without `locales`, its most preferred well-formed tag
 * (the header is hostile, and the attribute ends up in apps' output).
 */
function localeOf(negotiator: Negotiator, locales: readonly string[]): string | undefined {
  if (locales.length > 0) return negotiator.language([...locales])
  return negotiator.languages().find((tag) => tag !== '*' && LANGUAGE_TAG.test(tag))
}
