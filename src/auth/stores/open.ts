/**
 * Picks the store implementation from DATABASE_URL: `sqlite:PATH` (the default,
 * `sqlite:.fw/app.db`; `sqlite::memory:` for a throwaway one) or `postgres://...`.
 * Each driver is imported only when its URL is used.
 */
import { redactUrl } from '../../shared/redact-url.js'
import { checkOptions, optionNames } from '../../shared/option-names.js'
import type { Database } from './types.js'

export const DEFAULT_DATABASE_URL = 'sqlite:.fw/app.db'

export interface OpenDatabaseOptions {
  /** Prefix of the table names. Default none: `users`, `refresh_tokens`. */
  tablePrefix?: string | undefined
  /**
   * SQLite only: how long a store call waits in all for a lock another connection holds, in
   * milliseconds, then fails with SQLITE_BUSY (a 503). Default 5000.
   */
  busyBudgetMs?: number | undefined
  /** PostgreSQL only: the pool's size. Default 10. */
  max?: number | undefined
  /**
   * PostgreSQL only: how long to wait for a connection, and for a query's answer, in
   * milliseconds. Default 5000 and 15000.
   */
  connectionTimeoutMs?: number | undefined
  queryTimeoutMs?: number | undefined
}

// Every store's options, whatever the URL: one written for PostgreSQL is no typo on SQLite.
const OPEN_DATABASE_OPTIONS = optionNames<OpenDatabaseOptions>({
  tablePrefix: 1,
  busyBudgetMs: 1,
  max: 1,
  connectionTimeoutMs: 1,
  queryTimeoutMs: 1,
})

/**
 * @example
 * const db = await openDatabase(process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL)
 * const user = await db.users.findByEmail('ada@example.com')
 */
export async function openDatabase(
  url: string = DEFAULT_DATABASE_URL,
  options: OpenDatabaseOptions = {},
): Promise<Database> {
  // `tablePrefx` put the app's users in the unprefixed tables, beside another app's.
  checkOptions('openDatabase()', options, OPEN_DATABASE_OPTIONS)
  if (/^postgres(ql)?:\/\//i.test(url)) {
    const { openPostgres } = await import('./postgres.js')
    return openPostgres(url, options)
  }
  if (/^sqlite:/i.test(url)) {
    const { openSqliteAsync } = await import('./sqlite.js')
    return openSqliteAsync(sqlitePath(url), options)
  }
  throw new TypeError(
    `Unsupported DATABASE_URL "${redactUrl(url)}": use sqlite:PATH or postgres://USER@HOST/DB`,
  )
}

/** `sqlite:a.db`, `sqlite://a.db` and `sqlite:///abs/a.db` name files; `sqlite::memory:` none. */
function sqlitePath(url: string): string {
  const rest = url.slice('sqlite:'.length)
  if (rest === ':memory:' || rest === '//:memory:') return ':memory:'
  const path = rest.startsWith('//') ? rest.slice(2) : rest
  if (path === '')
    throw new TypeError('DATABASE_URL "sqlite:" names no file; use sqlite:.fw/app.db')
  return path
}
