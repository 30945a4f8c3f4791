/**
 * The built-in middleware aliases and the rules for their parameters. The compiler rejects any
 * other alias unless the routes file registered it with `r.alias(name, fn)`.
 */
import { FwError } from './errors.js'

/** Checks an alias's parameter text (after the `:`); returns a problem, or null when valid. */
type ParamCheck = (params: string | null) => string | null

const none: ParamCheck = (params) => (params === null ? null : 'takes no parameters')

const positiveInt = (text: string | undefined): boolean =>
  text !== undefined && /^[1-9][0-9]{0,8}$/.test(text)

/** A BCP 47 language tag, loosely (`en`, `fr-CH`): what `negotiate:` lists and `locale` holds. */
export const LANGUAGE_TAG = /^[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*$/

// `throttle` (60 per 60 s), `throttle:<max>` (per 60 s, as Laravel's one-number form) or `throttle:<max>,<seconds>`.
export const throttle: ParamCheck = (params) => {
  if (params === null) return null
  const parts = params.split(',')
  if (parts.length > 2 || !parts.every(positiveInt)) {
    return 'expects one or two positive integers (up to 9 digits): throttle:<max requests>[,<window seconds>]'
  }
  return null
}

// `negotiate` (any locale the client prefers) or `negotiate:en,fr` (the locales the app has).
const localeList: ParamCheck = (params) =>
  params === null || params.split(',').every((tag) => LANGUAGE_TAG.test(tag))
    ? null
    : 'expects a comma-separated list of language tags: negotiate:en,fr-CH'

const roleList: ParamCheck = (params) =>
  params !== null && params.split(',').every((role) => /^[\w.:-]+$/.test(role))
    ? null
    : 'expects a comma-separated list of roles: role:admin,editor'

export const BUILTIN_ALIASES: Readonly<Record<string, ParamCheck>> = {
  auth: none,
  throttle,
  role: roleList,
  verifySignedUrl: none,
  negotiate: localeList,
}

/**
 * Validates one alias string. Returns null when valid, else what is wrong.
 * @example
 * checkAlias('throttle:0,60', new Set()) // 'throttle:0,60: expects one or two positive integers: ...'
 */
export function checkAlias(
  alias: string,
  custom: ReadonlySet<string> | ReadonlyMap<string, unknown>,
): string | null {
  const colon = alias.indexOf(':')
  const name = colon === -1 ? alias : alias.slice(0, colon)
  const params = colon === -1 ? null : alias.slice(colon + 1)
  if (custom.has(name)) return custom instanceof Map ? checkNamed(alias, custom) : null
  const check = BUILTIN_ALIASES[name]
  if (check === undefined || !Object.hasOwn(BUILTIN_ALIASES, name)) {
    return `unknown middleware alias "${name}"`
  }
  const problem = check(params)
  return problem === null ? null : `${alias}: ${problem}`
}

/**
 * An alias of the routes file used as `alias`, checked where it leads: to a built-in, whose
 * parameters must hold (`r.alias('limit', 'throttle:0,60')` passed the build and failed the
 * boot, with no file:line); a function, or a name the kernel's middleware option implements,
 * cannot be checked here.
 */
function checkNamed(alias: string, aliases: ReadonlyMap<string, unknown>): string | null {
  let target: unknown
  try {
    target = walkAlias(alias, aliases).target
  } catch (error) {
    if (error instanceof FwError) return error.message
    throw error
  }
  if (typeof target !== 'string' || !Object.hasOwn(BUILTIN_ALIASES, target.split(':', 1)[0]!))
    return null
  const problem = checkAlias(target, new Set())
  return problem === null ? null : `${alias} names ${problem}`
}

/**
 * What the alias string `ref` stands for once the routes file's `r.alias` names are followed:
 * the function an alias names, else the alias of a built-in or module with its parameters. A
 * use's own parameters replace those of the alias it names: with `r.alias('limit',
 * 'throttle:5,60')`, `limit` is `throttle:5,60` and `limit:10,60` is `throttle:10,60`. Aliases
 * naming each other in a loop are a FW_MIDDLEWARE_INVALID error.
 * @example
 * followAlias('limit:10,60', registrar.aliases) // 'throttle:10,60'
 */
export function followAlias(ref: string, aliases: ReadonlyMap<string, unknown>): unknown {
  return walkAlias(ref, aliases).target
}

/**
 * followAlias(), and the use it ended at: for a function, the alias string naming it, whose
 * parameters the function is given (`tenant:acme` with `r.alias('tenant', fn)`: ['acme']).
 * @example
 * walkAlias('tenant:acme', aliases) // { target: fn, params: ['acme'] }
 */
export function walkAlias(
  ref: string,
  aliases: ReadonlyMap<string, unknown>,
): { target: unknown; params: string[] } {
  const through: string[] = []
  for (let current = ref; ;) {
    const colon = current.indexOf(':')
    const name = colon === -1 ? current : current.slice(0, colon)
    const target = aliases.get(name)
    if (typeof target !== 'string') {
      const params = colon === -1 ? [] : current.slice(colon + 1).split(',')
      return { target: target === undefined ? current : target, params }
    }
    if (through.includes(name)) {
      throw new FwError(
        'FW_MIDDLEWARE_INVALID',
        `Middleware aliases name each other in a loop: ${[...through, name].join(' → ')}`,
        { hint: 'Make one of them a function or a built-in alias such as throttle:5,60.' },
      )
    }
    through.push(name)
    current = colon === -1 ? target : `${target.split(':')[0]}:${current.slice(colon + 1)}`
  }
}
