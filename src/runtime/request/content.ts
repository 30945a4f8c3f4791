/** What a body is, judged by its Content-Type, and how raw content becomes parsed input. */
import { unsupportedMediaType } from '../http-error.js'
import type { BodyLimits } from '../types.js'
import { parseJson } from './json.js'
import { emptyParams } from './params.js'
import { parseParams, utf8Text } from './query.js'
import type { FileMap } from './multipart.js'

/**
 * `undecodable`: JSON or urlencoded content declared in a charset other than UTF-8 (or US-ASCII,
 * its subset), which fw does not decode: reading it is a 415, as in Express's body-parser.
 */
export type BodyKind = 'none' | 'json' | 'form' | 'multipart' | 'other' | 'undecodable'

/** A loaded body. `value` parses lazily, once; a parse error is thrown by every call. */
export interface BodyData {
  readonly raw: Buffer
  /** 'form' for urlencoded and multipart fields. */
  readonly kind: Exclude<BodyKind, 'multipart'>
  readonly value: () => unknown
  /**
   * The parsed value for a caller to keep and change. The first call hands over the parsed value
   * itself (no copy: a handler that reads its input once pays nothing more); later calls, and
   * `value()` from then on, parse the content again. Absent: callers copy `value()`.
   */
  readonly own?: () => unknown
  readonly files: FileMap
}

const EMPTY = Buffer.alloc(0)

/** The kind of a Content-Type header value (parameters and case ignored, but a charset's). */
export function bodyKind(contentType: string | undefined): BodyKind {
  if (contentType === undefined) return 'other'
  if (contentType === 'application/json') return 'json' // most JSON requests say exactly this
  const semicolon = contentType.indexOf(';')
  const type = (semicolon === -1 ? contentType : contentType.slice(0, semicolon))
    .trim()
    .toLowerCase()
  const kind = textKind(type)
  if ((kind !== 'json' && kind !== 'form') || semicolon === -1) return kind
  return isUtf8Charset(contentType.slice(semicolon + 1)) ? kind : 'undecodable'
}

function textKind(type: string): BodyKind {
  if (type === 'application/json') return 'json'
  if (type.startsWith('application/') && type.endsWith('+json')) return 'json'
  if (type === 'application/x-www-form-urlencoded') return 'form'
  if (type === 'multipart/form-data') return 'multipart'
  return 'other'
}

// The charsets whose content is UTF-8: its name, the label `utf8` (WHATWG Encoding) and
// US-ASCII, a subset.
const UTF8_CHARSETS = new Set(['utf-8', 'utf8', 'us-ascii'])

/** Whether the parameters of a media type (`; charset=...`) leave the content UTF-8. */
function isUtf8Charset(parameters: string): boolean {
  for (const parameter of parameters.split(';')) {
    const eq = parameter.indexOf('=')
    if (eq === -1 || parameter.slice(0, eq).trim().toLowerCase() !== 'charset') continue
    const value = parameter.slice(eq + 1).trim()
    const unquoted = value.length > 1 && value.startsWith('"') ? value.slice(1, -1) : value
    return UTF8_CHARSETS.has(unquoted.toLowerCase())
  }
  return true
}

/** An empty body: no content, no input. */
export function emptyBody(): BodyData {
  return { raw: EMPTY, kind: 'none', value: emptyParams, files: emptyParams() as FileMap }
}

/** A body from raw content of a JSON, urlencoded or other type (not multipart). */
export function contentBody(raw: Buffer, kind: BodyKind, limits: BodyLimits): BodyData {
  if (raw.length === 0) return emptyBody()
  const parse =
    kind === 'json'
      ? () => parseJson(utf8Text(raw), limits)
      : kind === 'form'
        ? () => parseParams(utf8Text(raw), limits, true)
        : kind === 'undecodable'
          ? refuseCharset
          : emptyParams
  return {
    raw,
    // An undecodable body reads as fields (input() and post() throw its 415), never as nothing.
    kind:
      kind === 'undecodable' ? 'form' : kind === 'multipart' || kind === 'none' ? 'other' : kind,
    ...handOver(parse),
    files: emptyParams() as FileMap,
  }
}

/**
 * `value` and `own` of BodyData over one parse function: a deep copy of a parsed 1 KB JSON body
 * cost ~10% of an echo request's instructions, and parsing again is needed only when a caller
 * reads the body a second time.
 */
function handOver<T>(parse: () => T): { value: () => T; own: () => T } {
  let value = memoize(parse)
  let handedOver = false
  return {
    value: () => value(),
    own: () => {
      if (handedOver) return parse()
      const parsed = value()
      handedOver = true
      value = memoize(parse)
      return parsed
    },
  }
}

function refuseCharset(): never {
  throw unsupportedMediaType('Unsupported charset: JSON and form bodies must be UTF-8')
}

/** Remembers the value, or the error, of the first call. */
export function memoize<T>(compute: () => T): () => T {
  let state: { ok: true; value: T } | { ok: false; error: unknown } | null = null
  return () => {
    if (state === null) {
      try {
        state = { ok: true, value: compute() }
      } catch (error) {
        state = { ok: false, error }
      }
    }
    if (state.ok) return state.value
    throw state.error
  }
}
