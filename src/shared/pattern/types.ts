/**
 * What a pattern parses to: literal segments and parameters, and the built-in parameter types.
 */

/** Built-in constrained types, in the order they are tried against one segment. */
export const BUILTIN_TYPES = ['int', 'uuid', 'hex', 'slug'] as const
export type BuiltinType = (typeof BUILTIN_TYPES)[number]

/** Regex sources of the built-in types (anchoring is added by whoever uses them). */
export const BUILTIN_REGEX: Readonly<Record<BuiltinType, string>> = {
  int: '[0-9]{1,15}',
  uuid: '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}',
  hex: '[0-9a-fA-F]+',
  slug: '[a-z0-9]+(?:-[a-z0-9]+)*',
}

export interface StaticSegment {
  kind: 'static'
  /**
   * The literal as it appears in a request path in RFC 3986 normal form: non-ASCII and spaces
   * percent-encoded with uppercase hex, unreserved characters never encoded.
   */
  value: string
}

export interface ParamSegment {
  kind: 'param'
  name: string
  /** `string` is a plain parameter; `regex` carries `regex`; `catchall` is `.*` or `.+`. */
  type: 'string' | BuiltinType | 'regex' | 'catchall'
  /** The regex source for `regex`, the built-in source for built-ins, `.*`/`.+` for catch-alls. */
  regex: string | null
  optional: boolean
  /** Catch-all only: whether the empty rest matches (`.*`). */
  allowEmpty: boolean
}

export type Segment = StaticSegment | ParamSegment
