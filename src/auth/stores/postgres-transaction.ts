/**
 * Transactions on the PostgreSQL pool, shared by the migration (postgres.ts) and the rotation of
 * refresh tokens (postgres-refresh-tokens.ts).
 */
import pg from 'pg'

/** One statement, on the pool or on the client of a transaction. */
export type Query = (text: string, values?: unknown[]) => Promise<pg.QueryResult>

// deadlock_detected, serialization_failure: PostgreSQL rolled the transaction back; run it again.
const RETRYABLE = new Set(['40P01', '40001'])

/**
 * Runs `work` in a transaction, again (up to 3 times) when PostgreSQL aborts it to break a deadlock.
 * @example
 * await transaction(pool, (query) => query('UPDATE users SET name = $1 WHERE id = $2', [name, id]))
 */
export async function transaction<T>(
  pool: pg.Pool,
  work: (query: Query) => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await attemptTransaction(pool, work)
    } catch (error) {
      if (attempt >= 3 || !RETRYABLE.has((error as { code?: string }).code ?? '')) throw error
    }
  }
}

async function attemptTransaction<T>(
  pool: pg.Pool,
  work: (query: Query) => Promise<T>,
): Promise<T> {
  const client = await pool.connect()
  let failure: Error | undefined
  // The pool listens for errors on idle clients only: a connection lost while this transaction
  // holds the client (the database restarted, a failover) emitted 'error' with no listener, an
  // uncaught exception that stopped the server. The query under way fails with it anyway.
  const lost = (error: Error): void => {
    failure ??= error
  }
  client.on('error', lost)
  try {
    await client.query('BEGIN')
    const result = await work((text, values) => client.query(text, values))
    await client.query('COMMIT')
    return result
  } catch (error) {
    // Only on a connection that answered: after a query timeout or a lost connection, ROLLBACK
    // waited for its own timeout (a 503 after 30 s, not 15), and the discarded client's
    // transaction is rolled back by PostgreSQL anyway.
    if (error instanceof pg.DatabaseError) await client.query('ROLLBACK').catch(() => {})
    failure = error as Error
    throw error
  } finally {
    // A client released with its error is discarded, not reused: after a query timeout it may
    // still be waiting for the answer (or in the aborted transaction). A discarded client keeps
    // the listener: its socket may still report an error after the release.
    if (failure === undefined) client.off('error', lost)
    client.release(failure)
  }
}
