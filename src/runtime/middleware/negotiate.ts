/**
 * The negotiation middleware (alias `negotiate`, or `negotiate:en,fr` to name the locales the app
 * has): sets `negotiated.type`, `negotiated.charset` and `locale` from Accept, Accept-Charset and
 * Accept-Language, using negotiator, and adds those three to the response's Vary. Only the first
 * 32 ranges of each header count.
 */
import Negotiator from 'negotiator'
import { LANGUAGE_TAG } from '../../shared/middleware-aliases.js'
import type { FwResponse } from '../response.js'
import type { Middleware } from '../types.js'
import { withVary } from '../vary.js'

export interface NegotiationOptions {
  types: string[]
  charsets: string[]
  /** The locales the app has; empty: any well-formed language tag the client prefers. */
  locales: string[]
  /** The locale when none of the client's is acceptable (default: the first of `locales`, else 'en'). */
  fallbackLocale?: string | undefined
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
    const accept = firstRanges(request.getHeaderLine('accept'))
    const negotiator = new Negotiator({
      headers: {
        accept,
        'accept-charset': firstRanges(request.getHeaderLine('accept-charset')),
        'accept-language': firstRanges(request.getHeaderLine('accept-language')),
      },
    })
    // One derived request, not three.
    const derived = request.withAttributes({
      'negotiated.type': negotiator.mediaType(options.types) ?? typeByName(accept, options.types),
      'negotiated.charset': negotiator.charset(options.charsets) ?? null,
      locale: localeOf(negotiator, options.locales) ?? fallback,
    })
    const response = next(derived)
    return response instanceof Promise ? response.then(varied) : varied(response)
  }
}

// What the attributes are made of. A shared cache (a CDN) that stored one client's answer would
// give it to the next whatever it accepts: a French page to an English browser. As Django's
// LocaleMiddleware and Express's res.format do, the response says so in Vary.
const NEGOTIATED = ['Accept', 'Accept-Charset', 'Accept-Language']

/** `response` with the negotiated headers added to its Vary (a `*` is left as it is). */
const varied = (response: FwResponse): FwResponse => withVary(response, NEGOTIATED)

// A parameter's value as negotiator's parser (content-type) reads it: a token, or a quoted string,
// which may hold ';' and ',' (`;x="a;q=1"` is no weight, `;x="a,b/c"` no second range).
const VALUE = String.raw`[ \t]*(?:"(?:[^"\\]|\\[\s\S])*(?:"[^;,]*|\\)?|[^;,]*)`
// A range's parameters, a weight (`;q=0.5`) captured to stay. Linear: at each ';' the weight is
// tried first, and a name stops at '=', ';' or ','; a quoted string at its end quote.
const PARAMETERS = new RegExp(String.raw`(;[ \t]*q[ \t]*=${VALUE})|;[^;,=]*(?:=${VALUE})?`, 'gi')

/**
 * The best of `types` with the ranges' parameters left out: negotiator matches a range with
 * parameters only to a type with the same ones, so `application/json; charset=utf-8`, which
 * clients send, found no type at all (Laravel's accepts() reads the type alone too).
 */
const typeByName = (accept: string | undefined, types: string[]): string | null =>
  (accept?.includes(';') &&
    new Negotiator({ headers: { accept: accept.replace(PARAMETERS, '$1') } }).mediaType(types)) ||
  null

// negotiator weighs every range of a header against every value offered: 2,000 language ranges
// against ten locales cost ~12 ms a request. Browsers send under 20; only the first 32 count.
const MAX_RANGES = 32

/** `line` (undefined when empty) cut to its first MAX_RANGES ranges; only a long one is scanned. */
function firstRanges(line: string): string | undefined {
  if (line.length <= 8 * MAX_RANGES) return line || undefined
  let at = -1
  for (let i = 0; i < MAX_RANGES; i++) {
    at = line.indexOf(',', at + 1)
    if (at === -1) return line
  }
  return line.slice(0, at)
}

/**
 * The best of `locales` for the client; without `locales`, its most preferred well-formed tag
 * (the header is hostile, and the attribute ends up in apps' output).
 */
function localeOf(negotiator: Negotiator, locales: readonly string[]): string | undefined {
  if (locales.length > 0) return negotiator.language([...locales])
  return negotiator.languages().find((tag) => tag !== '*' && LANGUAGE_TAG.test(tag))
}
