/**
 * The statement cache of the SQLite stores: each SQL text prepared once per database.
 */
import type BetterSqlite3 from 'better-sqlite3'

export type Db = BetterSqlite3.Database

// Node 24+ (see preparer): the better-sqlite3 objects this process made, kept from the GC.
const GC_ABORTS = Number(process.versions.node.split('.')[0]) >= 24
const RETAINED: unknown[] = []

/** `db.prepare(sql)`, but each SQL text prepared once per database and reused (see `preparer`). */
export type Prepare = <P extends unknown[] = unknown[], R = unknown>(
  sql: string,
) => BetterSqlite3.Statement<P, R>

/**
 * Statements prepared once per database and kept: no SQL is parsed again per call, and no
 * statement becomes garbage while the database is in use. The second matters on Node 24, where
 * the GC destroying a better-sqlite3 12 object at the wrong moment aborts the process: Node 24's
 * ObjectWrap looks up the Node environment of the current context, which a GC run from a
 * microtask may not have (`Assertion failed: (env) != nullptr`; better-sqlite3 13 fixes it, but
 * needs Node 22). There, a database and its statements are also kept after close(): a process
 * opens few, and none is then ever destroyed by the GC.
 * @example
 * const prepare = preparer(db)
 * prepare<[number], { name: string }>('SELECT name FROM users WHERE id = ?').get(1)
 */
export function preparer(db: Db): Prepare {
  const prepared = new Map<string, BetterSqlite3.Statement>()
  if (GC_ABORTS) RETAINED.push(db, prepared)
  return <P extends unknown[], R>(sql: string) => {
    let statement = prepared.get(sql)
    if (statement === undefined) {
      statement = db.prepare(sql)
      prepared.set(sql, statement)
    }
    return statement as unknown as BetterSqlite3.Statement<P, R>
  }
}
