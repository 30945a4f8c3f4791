/**
 * Errors with a stable code, a message that says what to do, and (when known) the place in the
 * user's routes file that caused them. The CLI prints them as one line plus a hint.
 */

/** Where a route or group was registered in the user's source. */
export interface SourceLocation {
  file: string
  line: number
  column: number
}

/** The stable codes; tests keep this list and the thrown errors in sync. */
export const ERROR_CODES = {
  FW_PATTERN_INVALID: 'A path or domain pattern cannot be parsed',
  FW_PARAM_NAME_INVALID: 'A parameter name is not a valid identifier',
  FW_PARAM_DUPLICATE: 'A parameter name is used twice in one route',
  FW_OPTIONAL_NOT_TRAILING: 'An optional parameter is followed by a required segment',
  FW_CATCHALL_NOT_LAST_SEGMENT: 'A catch-all parameter is not the last segment',
  FW_CATCHALL_NOT_LAST: 'A route is registered after a catch-all in the same scope',
  FW_REGEX_INVALID: 'A custom parameter regex does not compile',
  FW_REGEX_UNSAFE: 'A custom parameter regex can backtrack catastrophically',
  FW_REGEX_NEVER_MATCHES: 'A custom parameter regex can never match a path segment',
  FW_ROUTE_DUPLICATE: 'The same method, host and path are registered twice',
  FW_ROUTE_SHADOWED: 'A route can never match because another one matches the same paths first',
  FW_NAME_DUPLICATE: 'Two routes have the same name',
  FW_NAME_INVALID: 'A route name is empty or malformed',
  FW_MIDDLEWARE_INVALID: 'A middleware alias is unknown or malformed',
  FW_HANDLER_INVALID: 'A route handler is missing or malformed',
  FW_METHOD_INVALID: 'An HTTP method is not supported',
  FW_ROUTES_EMPTY: 'The route table is empty',
  FW_ROUTES_NOT_FOUND: 'The routes file does not exist',
  FW_ROUTES_SYNTAX: 'The routes file does not compile',
  FW_ROUTES_NO_DEFAULT: 'The routes file has no default export function',
  FW_ROUTES_LOAD: 'The routes file threw while it was loaded',
  FW_ROUTES_READ: 'The routes file, or a file it imports, cannot be read',
  FW_ROUTES_ASYNC: 'The routes function returned a promise; it must register routes synchronously',
  FW_ROUTES_LATE: 'A route was registered after the routes function returned',
  FW_TEMP_WRITE: 'The temporary bundle fw imports the routes or config file from cannot be written',
  FW_CACHE_MISSING: 'The route cache has not been built',
  FW_CACHE_STALE: 'The route cache was built from other routes or by another version',
  FW_CACHE_UNSAFE_DIR: 'The cache directory is not a safe place to write or delete',
  FW_CACHE_WRITE: 'The cache directory cannot be created or written',
  FW_CACHE_BUSY: 'Another build has held the cache directory for too long',
  FW_URL_UNKNOWN_ROUTE: 'urlFor was given an unknown route name',
  FW_URL_PARAM: 'urlFor was given a missing, unknown or invalid parameter',
  FW_URL_BASE: 'urlFor was given a base (or APP_URL is) that is no absolute URL',
  FW_SERVE_PORT: 'The port to serve on is already in use',
  FW_SERVE_HOST: 'The host to serve on is not an address or known name of this machine',
  FW_SERVE_WORKER: 'A worker of fw serve --workers stopped while starting',
  FW_SERVE_CONFIG: 'The server cannot start with this configuration',
  FW_CONFIG_INVALID: 'fw.config.ts threw or does not export an object',
  FW_INIT_EXISTS: 'fw init would overwrite existing files',
  FW_INIT_WRITE: 'The folder for the new app cannot be created or written',
  FW_INIT_UNSAFE_DIR: 'fw init was pointed at no folder of its own (root, home, empty name)',
  FW_USER_EXISTS: 'A user with this email already exists',
  FW_USER_INVALID: 'The user to create is missing a field or has an invalid one',
  FW_PASSWORD_WEAK: 'The password is too short, too long or too common',
  FW_PASSWORD_MISSING: 'No password was given',
  FW_DATABASE_UNAVAILABLE: 'The database cannot be reached',
  FW_APP_UNCAUGHT: "The app's code threw, or rejected a promise, where nothing catches it",
} as const

export type ErrorCode = keyof typeof ERROR_CODES

/**
 * A user-facing error of the router, the compiler or the CLI.
 * @example
 * throw new FwError('FW_NAME_DUPLICATE', 'Route name "home" is used twice', {
 *   hint: 'Rename one of the routes.',
 *   location: { file: 'routes.ts', line: 3, column: 1 },
 * })
 */
export class FwError extends Error {
  readonly code: ErrorCode
  readonly hint: string | undefined
  readonly location: SourceLocation | undefined

  constructor(
    code: ErrorCode,
    message: string,
    options: { hint?: string; location?: SourceLocation; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'FwError'
    this.code = code
    this.hint = options.hint
    this.location = options.location
  }
}

/**
 * An error already printed, by a worker of `fw serve --workers` on the same terminal: the CLI ends
 * with exit code 1 and prints nothing more (a second, vaguer error for the one cause).
 */
export class ReportedError extends Error {}

/** `file:line:column`, or '' when the location is unknown. */
export function formatLocation(location: SourceLocation | undefined): string {
  return location ? `${location.file}:${location.line}:${location.column}` : ''
}
