/**
 * An immutable, case-insensitive header collection. Names are lowercase, as Node and `Headers`
 * give them, wherever a header comes from (`withHeader('X-Tenant', …)` too): `getHeaders()` lists
 * them so, and lookups go through the lowercase key.
 */
export interface HeaderEntry {
  readonly name: string
  readonly values: readonly string[]
}

export type HeaderBag = ReadonlyMap<string, HeaderEntry>

/** A header's value: a finite number is written as its decimal string. */
export type HeaderValue = string | number | readonly string[]

export type HeaderInit = Record<string, HeaderValue | undefined>

// RFC 9110 token characters for names; values may not carry line breaks or NUL.
export const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const BAD_VALUE = /[\r\n\0]/

/** A bag from Node's `req.headersDistinct` (lowercase names, value lists). */
export function headersFromDistinct(distinct: Record<string, string[] | undefined>): HeaderBag {
  const bag = new Map<string, HeaderEntry>()
  for (const name of Object.keys(distinct)) {
    const values = distinct[name]
    if (values) bag.set(name, { name, values })
  }
  return bag
}

/**
 * A bag from Node's `req.rawHeaders` ([name, value, name, value, ...] as received). Nothing is
 * built up front: `get`/`has` scan the list (a request carries a dozen headers, and a request
 * reads a handful of them, mostly absent ones), which is ~5x cheaper than filling a Map; anything
 * else (iteration, size, copies) builds the Map once. Node builds neither `headers` nor
 * `headersDistinct` for us either.
 */
export function headersFromRaw(raw: readonly string[]): HeaderBag {
  return new RawHeaders(raw)
}

/**
 * Whether a raw header name is `key` (lowercase), ASCII case-insensitively. Compared in place
 * when the lengths agree but the strings differ: such names mostly differ from the key in their
 * first character, and lowercasing a name (a builtin call, maybe a new string) cost more.
 */
export function isName(name: string, key: string): boolean {
  const length = key.length
  if (name.length !== length) return false
  if (name === key) return true
  for (let i = 0; i < length; i++) {
    const c = name.charCodeAt(i)
    const k = key.charCodeAt(i)
    if (c !== k && !(c >= 65 && c <= 90 && c + 32 === k)) return false
  }
  return true
}

class RawHeaders implements ReadonlyMap<string, HeaderEntry> {
  readonly #raw: readonly string[]
  #map: Map<string, HeaderEntry> | null = null

  constructor(raw: readonly string[]) {
    this.#raw = raw
  }

  /** `key` is lowercase (every caller goes through `lowerName` or a literal). */
  get(key: string): HeaderEntry | undefined {
    if (this.#map !== null) return this.#map.get(key)
    const raw = this.#raw
    let values: string[] | undefined
    for (let i = 0; i + 1 < raw.length; i += 2) {
      if (!isName(raw[i]!, key)) continue
      if (values === undefined) values = [raw[i + 1]!]
      else values.push(raw[i + 1]!)
    }
    return values === undefined ? undefined : { name: key, values }
  }

  /** The first value of `key` (lowercase), found without building an entry. */
  first(key: string): string | undefined {
    if (this.#map !== null) return this.#map.get(key)?.values[0]
    const raw = this.#raw
    for (let i = 0; i + 1 < raw.length; i += 2) {
      if (isName(raw[i]!, key)) return raw[i + 1]!
    }
    return undefined
  }

  /** All values of `key` (lowercase) joined with ', ' ('' when absent), without building an entry. */
  line(key: string): string {
    if (this.#map !== null) return this.#map.get(key)?.values.join(', ') ?? ''
    const raw = this.#raw
    let line: string | undefined
    for (let i = 0; i + 1 < raw.length; i += 2) {
      if (isName(raw[i]!, key)) line = line === undefined ? raw[i + 1]! : `${line}, ${raw[i + 1]!}`
    }
    return line ?? ''
  }

  /** The last value of `key` (lowercase), found without building an entry. */
  last(key: string): string | undefined {
    if (this.#map !== null) return this.#map.get(key)?.values.at(-1)
    const raw = this.#raw
    for (let i = raw.length - 2; i >= 0; i -= 2) {
      if (isName(raw[i]!, key)) return raw[i + 1]!
    }
    return undefined
  }

  has(key: string): boolean {
    return this.first(key) !== undefined
  }

  get size(): number {
    return this.#all().size
  }

  forEach(
    callback: (value: HeaderEntry, key: string, map: ReadonlyMap<string, HeaderEntry>) => void,
    thisArg?: unknown,
  ): void {
    this.#all().forEach((value, key) => callback.call(thisArg, value, key, this))
  }

  entries(): MapIterator<[string, HeaderEntry]> {
    return this.#all().entries()
  }

  keys(): MapIterator<string> {
    return this.#all().keys()
  }

  values(): MapIterator<HeaderEntry> {
    return this.#all().values()
  }

  [Symbol.iterator](): MapIterator<[string, HeaderEntry]> {
    return this.#all()[Symbol.iterator]()
  }

  #all(): Map<string, HeaderEntry> {
    if (this.#map === null) {
      const map = new Map<string, HeaderEntry>()
      const raw = this.#raw
      for (let i = 0; i + 1 < raw.length; i += 2) {
        const name = raw[i]!.toLowerCase()
        const entry = map.get(name)
        if (entry === undefined) map.set(name, { name, values: [raw[i + 1]!] })
        else (entry.values as string[]).push(raw[i + 1]!)
      }
      this.#map = map
    }
    return this.#map
  }
}

/**
 * A bag from a plain record, validating names and values as `withHeader` does. Names are
 * lowercased, as Node and `Headers` give them: `getHeaders()` of `create()` lists the same keys
 * as a request off the wire.
 */
export function headersFromRecord(init: HeaderInit): HeaderBag {
  let bag: HeaderBag = new Map()
  for (const name of Object.keys(init)) {
    const value = init[name]
    if (value !== undefined) bag = withAddedHeader(bag, name.toLowerCase(), value)
  }
  return bag
}

/** A bag from a WHATWG `Headers` object (already validated by it). */
export function headersFromWeb(headers: Headers): HeaderBag {
  const bag = new Map<string, HeaderEntry>()
  for (const [name, value] of headers) {
    const previous = bag.get(name)?.values ?? []
    // `Headers` joins repeated fields with ', ' except Set-Cookie, which it lists separately.
    bag.set(name, { name, values: [...previous, value] })
  }
  return bag
}

// Lookups use a few names again and again (mostly constants in our own code): remember their
// lowercase forms instead of lowercasing on every call.
const LOWER = new Map<string, string>()

export function lowerName(name: string): string {
  let lower = LOWER.get(name)
  if (lower === undefined) {
    lower = name.toLowerCase()
    if (LOWER.size < 512) LOWER.set(name, lower)
  }
  return lower
}

const NO_VALUES: readonly string[] = Object.freeze([])

/** The values of `name`, empty when absent. */
export function headerValues(bag: HeaderBag, name: string): readonly string[] {
  return valuesOf(bag, lowerName(name))
}

/** The values of `name` joined with ', ' (a header line), '' when absent. */
export function headerLine(bag: HeaderBag, name: string): string {
  return lineOf(bag, lowerName(name))
}

/** The first value of `name`, or undefined. */
export function firstHeader(bag: HeaderBag, name: string): string | undefined {
  return firstOf(bag, lowerName(name))
}

/** The values of `lower`, a name already in lowercase (our own constants): no case mapping. */
export function valuesOf(bag: HeaderBag, lower: string): readonly string[] {
  return bag.get(lower)?.values ?? NO_VALUES
}

/** The first value of `lower`, a name already in lowercase: no case mapping, no entry built. */
export function firstOf(bag: HeaderBag, lower: string): string | undefined {
  return bag instanceof RawHeaders ? bag.first(lower) : bag.get(lower)?.values[0]
}

/** The values of `lower` (a name already in lowercase) joined with ', ', '' when absent. */
export function lineOf(bag: HeaderBag, lower: string): string {
  return bag instanceof RawHeaders ? bag.line(lower) : (bag.get(lower)?.values.join(', ') ?? '')
}

/** The last value (field line) of `lower`, a name already in lowercase. */
export function lastOf(bag: HeaderBag, lower: string): string | undefined {
  return bag instanceof RawHeaders ? bag.last(lower) : bag.get(lower)?.values.at(-1)
}

/** A copy of `bag` with `name` set to `value`, replacing earlier values. */
export function withHeader(bag: HeaderBag, name: string, value: HeaderValue): HeaderBag {
  const values = checkValues(name, value)
  const lower = name.toLowerCase()
  const copy = new Map(bag)
  copy.set(lower, { name: lower, values })
  return copy
}

/** A copy of `bag` with `value` appended to `name`. */
export function withAddedHeader(bag: HeaderBag, name: string, value: HeaderValue): HeaderBag {
  const lower = name.toLowerCase()
  const previous = bag.get(lower)
  const values = [...(previous?.values ?? []), ...checkValues(name, value)]
  const copy = new Map(bag)
  copy.set(lower, { name: previous?.name ?? lower, values })
  return copy
}

/** A copy of `bag` without `name`. */
export function withoutHeader(bag: HeaderBag, name: string): HeaderBag {
  const copy = new Map(bag)
  copy.delete(name.toLowerCase())
  return copy
}

/** Header name (lowercase) → list of values. */
export function headersToRecord(bag: HeaderBag): Record<string, string[]> {
  const record: Record<string, string[]> = {}
  for (const entry of bag.values()) {
    Object.defineProperty(record, entry.name, {
      value: [...entry.values],
      enumerable: true,
      writable: true,
      configurable: true,
    })
  }
  return record
}

/**
 * The values of a header as strings. A finite number is its decimal string, as Node's setHeader
 * and PSR-7 implementations write it (`withHeader('X-Count', 5)` from JS); anything else that is
 * not a string or a list of strings is a TypeError naming the header, not the "not iterable" of
 * spreading it.
 */
function checkValues(name: string, value: HeaderValue): string[] {
  if (!TOKEN.test(name)) throw new TypeError(`Invalid header name: ${JSON.stringify(name)}`)
  const values =
    typeof value === 'string'
      ? [value]
      : typeof value === 'number' && Number.isFinite(value)
        ? [String(value)]
        : Array.isArray(value)
          ? [...(value as readonly string[])]
          : null
  if (values === null || values.some((v) => typeof v !== 'string')) {
    throw new TypeError(
      `Header ${name} takes a string, a finite number or a list of strings, not ${describe(value)}`,
    )
  }
  for (const v of values) {
    if (BAD_VALUE.test(v)) throw new TypeError(`Invalid value for header ${name}`)
  }
  return values
}

/** How a rejected header value is named in its error: `NaN`, `null`, `an object`… */
function describe(value: unknown): string {
  if (Array.isArray(value)) return 'a list holding other values'
  if (typeof value === 'number' || value === null || value === undefined) return String(value)
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`
}
