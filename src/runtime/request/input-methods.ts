/**
 * The body accessors of the request (spec table, "Body" and "Files"), kept apart from the
 * message plumbing: Laravel's InteractsWithInput, as a base class. Each reads the loaded body,
 * so each throws until `loadBody()` has resolved (requests from `create()` start loaded).
 */
import type { BodyData } from './content.js'
import { copyAt, flattenKeys, isFilled, lookup, omit, pick, valueAt, type Fields } from './input.js'
import type { FileMap } from './multipart.js'
import { copyDeep, emptyParams, isRecord, type Params } from './params.js'
import type { UploadedFile } from './uploaded-file.js'

type Keys = readonly (string | readonly string[])[]

/**
 * Reading input. Mixed into `FwRequest` (mixInto), which supplies the body, query and method.
 * @example
 * request.only('name', 'address.city') // { name: 'Ada', address: { city: 'London' } }
 */
export abstract class InputMethods {
  protected abstract bodyData(): BodyData
  protected abstract queryParams(): Params
  /** The method on the wire (`post()` ignores overrides, like PHP's `$_POST`). */
  protected abstract wireMethod(): string

  // --- Body -----------------------------------------------------------------------------------

  /** The raw body as text ('' for multipart, whose parts are streamed, not kept). */
  getContent(): string {
    return this.bodyData().raw.toString('utf8')
  }

  /** PSR-7's parsed body (a copy): the JSON value or the form fields; null without a body. */
  getParsedBody(): unknown {
    const body = this.bodyData()
    return body.kind === 'none' || body.kind === 'other' ? null : ownValue(body)
  }

  /**
   * The parsed body's fields (JSON object, urlencoded or multipart; any method), spec rule 1:
   * the query string stays in `query()`. A dotted key reads nested values. Objects and arrays
   * come back as copies: changing them leaves the request as it was. A JSON list body reads by
   * index (`input('0.name')`) and `input()` is then the list: an array at run time, still typed
   * `Params` so that `input().name` stays plain for the usual object body (for a typed list,
   * narrow `json()`, an `unknown`). A JSON scalar has no fields.
   */
  input(): Params
  input(key: string, fallback?: unknown): unknown
  input(key?: string, fallback: unknown = null): unknown {
    const body = this.bodyData()
    return key === undefined ? ownFields(body) : copyAt(fieldsOf(body), key, fallback)
  }

  /** The JSON body (null when the body is not JSON), or a dotted key in it; a copy, as input(). */
  json(key?: string, fallback: unknown = null): unknown {
    const body = this.bodyData()
    if (key === undefined) return body.kind === 'json' ? ownValue(body) : null
    return copyAt(body.kind === 'json' ? body.value() : null, key, fallback)
  }

  /** Form fields (urlencoded or multipart) of a POST request; `{}` otherwise. */
  post(): Params
  post(key: string, fallback?: unknown): unknown
  post(key?: string, fallback: unknown = null): unknown {
    const body = this.bodyData()
    const isForm = this.wireMethod() === 'POST' && body.kind === 'form'
    const fields = isForm ? asParams(body.value()) : emptyParams()
    return key === undefined ? copyDeep(fields) : copyAt(fields, key, fallback)
  }

  /**
   * Whether every key is present in `input()` (null values count as present). Keys come as
   * separate arguments, lists, or both, as in Laravel: `has('name', 'email')`.
   */
  has(...keys: Keys): boolean {
    const all = fieldsOf(this.bodyData())
    return flattenKeys(keys).every((key) => lookup(all, key).found)
  }

  hasAll(keys: readonly string[]): boolean {
    return this.has(keys)
  }

  /** Whether every key (as has() takes them) is present and not null, blank or an empty array. */
  filled(...keys: Keys): boolean {
    const all = fieldsOf(this.bodyData())
    return flattenKeys(keys).every((key) => isFilled(valueAt(all, key, null)))
  }

  /** A copy of the given (dotted) keys of `input()` that exist, nested as there. */
  only(...keys: Keys): Params {
    return pick(fieldsOf(this.bodyData()), flattenKeys(keys))
  }

  /** A copy of `input()` without the given (dotted) keys; of a JSON list body, a shorter list. */
  except(...keys: Keys): Params {
    return omit(fieldsOf(this.bodyData()), flattenKeys(keys)) as Params
  }

  /** Uploaded files by field name (a list for multi-file fields); new lists, the same files. */
  files(): FileMap {
    const files = this.bodyData().files
    const copy = emptyParams() as FileMap
    for (const key of Object.keys(files)) copy[key] = copyList(files[key]!)
    return copy
  }

  getUploadedFiles(): FileMap {
    return this.files()
  }

  /**
   * The file (or list of files) of field `key`. A field named with brackets, `docs[cv]`, is
   * also found by its dotted path, `file('docs.cv')`, as input() reads nested text fields (and
   * Laravel's `file()` does); `docs[]` fields are the list `file('docs')`, and `file('docs.0')`
   * its first file.
   */
  file(key: string): UploadedFile | UploadedFile[] | null {
    const files = this.bodyData().files
    if (Object.hasOwn(files, key)) return copyList(files[key]!)
    const dot = key.lastIndexOf('.')
    if (dot === -1) return null
    const bracketed = bracketName(key)
    if (bracketed !== null && Object.hasOwn(files, bracketed)) return copyList(files[bracketed]!)
    const index = key.slice(dot + 1)
    const list = /^\d+$/.test(index) ? this.file(key.slice(0, dot)) : null
    return Array.isArray(list) ? (list[Number(index)] ?? null) : null
  }
}

/**
 * Puts the methods of each of `sources` (InputMethods, MethodChecks) on `target`'s prototype,
 * those it does not define itself. For FwRequest, whose instances are made several times per
 * request: a class that extends another is constructed through V8's generic construct stub, one
 * that does not is not.
 * @example
 * export interface FwRequest extends InputMethods {}
 * mixInto(FwRequest, InputMethods)
 */
export function mixInto(
  target: { readonly prototype: object },
  ...sources: { readonly prototype: object }[]
): void {
  for (const { prototype: source } of sources) {
    for (const name of Object.getOwnPropertyNames(source)) {
      if (name === 'constructor' || Object.hasOwn(target.prototype, name)) continue
      Object.defineProperty(target.prototype, name, Object.getOwnPropertyDescriptor(source, name)!)
    }
  }
}

/**
 * The body's fields, not copied: for reading only (callers get copies). A function, not a private
 * method: a class with private members gives each instance a brand, so `new FwRequest` would
 * run this class's constructor too, where V8 now skips it (about a tenth of a microsecond for
 * each of the two or three requests a request makes on its way through the pipeline).
 */
function fieldsOf(body: BodyData): Fields {
  const value = body.value()
  return Array.isArray(value) ? value : asParams(value)
}

/** The parsed body for the caller to keep: handed over once, else a copy (see BodyData.own). */
function ownValue(body: BodyData): unknown {
  return body.own ? body.own() : copyDeep(body.value())
}

/** input()'s fields for the caller to keep: the body's own when it is an object or a list. */
function ownFields(body: BodyData): Params {
  const value = body.value()
  // A list is handed over as the array it is (see input()); only a JSON body parses to one.
  return isRecord(value) || Array.isArray(value) ? (ownValue(body) as Params) : emptyParams()
}

/** The form field name of a dotted path: `docs.cv.pdf` → `docs[cv][pdf]` (null for `a..b`). */
function bracketName(path: string): string | null {
  const [first, ...rest] = path.split('.')
  if (first === '' || rest.some((part) => part === '')) return null
  return `${first}${rest.map((part) => `[${part}]`).join('')}`
}

function copyList(files: UploadedFile | UploadedFile[]): UploadedFile | UploadedFile[] {
  return Array.isArray(files) ? [...files] : files
}

function asParams(value: unknown): Params {
  return isRecord(value) ? value : emptyParams()
}
