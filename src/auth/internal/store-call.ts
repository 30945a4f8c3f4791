/**
 * A call to the user or refresh-token store. A store that cannot be reached (the database is
 * down, its pool exhausted) is a 503 naming the store, as the revocation list's is, never a 500
 * that reads like a bug in the endpoint. HTTP errors pass through as they are.
 */
import { HttpError, serviceUnavailable } from '../../runtime/http-error.js'

export async function storeCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (error) {
    if (error instanceof HttpError) throw error
    throw serviceUnavailable('The user store is unavailable', { cause: error })
  }
}
