/**
 * File paths from a catch-all parameter. Its value arrives decoded (`%2F` is `/` there) and may
 * hold `..` segments or be absolute, so using it as a path as it is can reach any file.
 */
import { resolve, sep } from 'node:path'
import { notFound } from './http-error.js'

/**
 * `value` resolved against `base`, or a 404 `HttpError` when the result would leave `base` (`..`
 * segments, an absolute path) or holds a NUL byte (where the file system would cut the path).
 * `base` itself (an empty value) is allowed: the caller decides what a folder answers.
 * @example
 * r.get('/files/{path:.*}', (req: FwRequest, path: string) => stream(createReadStream(safePath('public', path))))
 */
export function safePath(base: string, value: string): string {
  const root = resolve(base)
  const file = resolve(root, value)
  const inside = file === root || file.startsWith(root.endsWith(sep) ? root : root + sep)
  if (!inside || value.includes('\0')) throw notFound()
  return file
}
