/**
 * The negotiation middleware (alias `negotiate`): sets `negotiated.type`, `negotiated.charset` and
 * `locale` from Accept, Accept-Charset and Accept-Language, using negotiator.
 */
import Negotiator from 'negotiator'
import type { Middleware } from '../types.js'

export interface NegotiationOptions {
  types: string[]
  charsets: string[]
  locales: string[]
}

export const DEFAULT_NEGOTIATION: NegotiationOptions = {
  types: ['application/json', 'text/html', 'text/plain'],
  charsets: ['utf-8', 'iso-8859-1'],
  locales: ['en'],
}

export function negotiate(options: NegotiationOptions = DEFAULT_NEGOTIATION): Middleware {
  return (request, next) => {
    const negotiator = new Negotiator({
      headers: {
        accept: request.getHeaderLine('accept') || undefined,
        'accept-charset': request.getHeaderLine('accept-charset') || undefined,
        'accept-language': request.getHeaderLine('accept-language') || undefined,
      },
    })
    const derived = request
      .withAttribute('negotiated.type', negotiator.mediaType(options.types) ?? null)
      .withAttribute('negotiated.charset', negotiator.charset(options.charsets) ?? null)
      .withAttribute('locale', negotiator.language(options.locales) ?? options.locales[0] ?? null)
    return next(derived)
  }
}
