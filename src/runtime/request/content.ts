/** What a body is, judged by its Content-Type, and how raw content becomes parsed input. */
import type { BodyLimits } from '../types.js'
import { parseJson } from './json.js'
import { emptyParams } from './params.js'
import { parseParams } from './query.js'
import type { FileMap } from './multipart.js'

export type BodyKind = 'none' | 'json' | 'form' | 'multipart' | 'other'

/** A loaded body. `value` parses lazily, once; a parse error is thrown by every call. */
export interface BodyData {
  readonly raw: Buffer
  /** 'form' for urlencoded and multipart fields. */
  readonly kind: Exclude<BodyKind, 'multipart'>
  readonly value: () => unknown
  readonly files: FileMap
}

const EMPTY = Buffer.alloc(0)

/** The kind of a Content-Type header value (parameters and case ignored). */
export function bodyKind(contentType: string | undefined): BodyKind {
  if (contentType === undefined) return 'other'
  if (contentType === 'application/json') return 'json' // most JSON requests say exactly this
  const semicolon = contentType.indexOf(';')
  const type = (semicolon === -1 ? contentType : contentType.slice(0, semicolon))
    .trim()
    .toLowerCase()
  if (type === 'application/json') return 'json'
  if (type.startsWith('application/') && type.endsWith('+json')) return 'json'
  if (type === 'application/x-www-form-urlencoded') return 'form'
  if (type === 'multipart/form-data') return 'multipart'
  return 'other'
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
      ? () => parseJson(raw.toString('utf8'), limits)
      : kind === 'form'
        ? () => parseParams(raw.toString('utf8'), limits, true)
        : emptyParams
  return {
    raw,
    kind: kind === 'multipart' || kind === 'none' ? 'other' : kind,
    value: memoize(parse),
    files: emptyParams() as FileMap,
  }
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
