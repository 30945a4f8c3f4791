/**
 * A promise bounded in time: what `work` settles with, or a rejection with `message` once `ms`
 * have passed. The timer keeps no process alive and is cleared as soon as `work` settles.
 * @example
 * await within(redis.exists(key), 1000, 'Redis did not answer within 1000 ms')
 */
export function within<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms)
    timer.unref()
  })
  return Promise.race([work, late]).finally(() => clearTimeout(timer))
}
