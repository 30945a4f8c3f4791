/**
 * The state of FwRequest's derived copies (PSR-7 `with*`) where it takes more than one field:
 * another URI, another parsed body or files, other query or cookie parameters.
 */
import { BodySlot } from './body.js'
import type { BodyData } from './content.js'
import * as h from './headers.js'
import type { Fields } from './input.js'
import type { FileMap } from './multipart.js'
import { copyDeep, emptyParams, type Params } from './params.js'
import { parseParams } from './query.js'
import type { RequestState } from './state.js'
import * as uri from './uri.js'

/**
 * The state for another request target (path?query or absolute URI); the query is re-read from it.
 * @example
 * const patch = uriPatch(state, 'https://example.test/users?page=2', false)
 */
export function uriPatch(
  s: RequestState,
  target: string,
  keepHost: boolean,
): Partial<RequestState> {
  const url = uri.isAbsoluteForm(target) ? new URL(target) : null
  const { path, query } = uri.splitTarget(target)
  const params = parseParams(query, s.options.limits)
  return {
    target: query === '' ? path : `${path}?${query}`,
    query: () => params,
    headers: url ? uriHeaders(s.headers, url, keepHost) : s.headers,
    peer: url ? uri.withEncryption(s.peer, url.protocol === 'https:') : s.peer,
    // The new target replaces the URL the request was made for, as it replaces an absolute one.
    origin: undefined,
  }
}

/**
 * The state with `data` as the parsed body (what `input()`/`post()` read); with null, none.
 * @example
 * const patch = parsedBodyPatch(state, { name: 'Ada' })
 */
export function parsedBodyPatch(s: RequestState, data: Fields | null): Partial<RequestState> {
  // A list stays one (a JSON list body passed on, a parsed XML list), read by index as input()
  // reads a JSON list body; it became a map keyed '0', '1'….
  const value = Array.isArray(data)
    ? copyDeep(data)
    : Object.assign(emptyParams(), data === null ? null : copyDeep(data))
  const kind = (base: BodyData): BodyData['kind'] =>
    data === null ? 'none' : base.kind === 'json' ? 'json' : 'form'
  return { body: BodySlot.overlay(s.body, (base) => ({ kind: kind(base), value: () => value })) }
}

/**
 * The state with `files` as the uploaded files.
 * @example
 * const patch = uploadedFilesPatch(state, { avatar: file })
 */
export function uploadedFilesPatch(s: RequestState, files: FileMap): Partial<RequestState> {
  const copy = Object.assign(emptyParams(), files) as FileMap
  return { body: BodySlot.overlay(s.body, () => ({ files: copy })) }
}

/**
 * A reader of a private deep copy of `params` (for the query or the cookies of a copy).
 * @example
 * const patch = { query: paramsReader({ page: '2' }) }
 */
export function paramsReader(params: Params): () => Params {
  const copy = Object.assign(emptyParams(), copyDeep(params))
  return () => copy
}

/**
 * The headers of a request given the absolute URI `url`: its Host (unless kept), and none of a
 * proxy's X-Forwarded-Proto/-Host/-Port, which would otherwise still name the scheme and host
 * the proxy saw instead of the new URI's.
 */
function uriHeaders(headers: h.HeaderBag, url: URL, keepHost: boolean): h.HeaderBag {
  let bag = h.withoutHeader(headers, 'x-forwarded-proto')
  if (keepHost) return bag
  bag = h.withoutHeader(h.withoutHeader(bag, 'x-forwarded-host'), 'x-forwarded-port')
  return h.withHeader(bag, 'host', url.host)
}
