/**
 * A file as the response (Laravel's `response()->file()` and `->download()`): the file is opened
 * and checked before anything is sent, so a missing one is a 404 rather than a 200 cut short.
 */
import { constants } from 'node:fs'
import { open } from 'node:fs/promises'
import { basename, extname } from 'node:path'
import { forbidden, notFound, type HeaderMap } from './http-error.js'
import { FwResponse } from './response.js'

export interface FileOptions {
  /** Content-Type; by default from the file's extension, else `application/octet-stream`. */
  contentType?: string
  /** Send as an attachment (Content-Disposition): `true` under the file's own name, or a name. */
  download?: boolean | string
  /** More headers (they win over the computed ones). */
  headers?: HeaderMap
}

// Loaded on first use: mime-types reads a 200 KB type database that an app which never sends a
// file should not pay for at start-up.
let mimeTypes: Promise<typeof import('mime-types')> | undefined
let disposition: Promise<typeof import('content-disposition')> | undefined

// Errors that mean "nothing to send at this path": a 404, like any other missing resource.
const MISSING = new Set(['ENOENT', 'ENOTDIR', 'EISDIR', 'ENAMETOOLONG', 'ELOOP'])

/**
 * 200 with the file at `path` streamed, Content-Type, Content-Length and Last-Modified. A path that
 * does not name a regular file is a 404, one the process may not read a 403. Keep a path built
 * from request input inside its folder with `safePath()` first.
 * @example
 * r.get('/files/{path:.*}', (req, path) => file(safePath('public', path)))
 * r.get('/invoices/{id:int}', (req, id) => file(`invoices/${id}.pdf`, { download: `invoice-${id}.pdf` }))
 */
export async function file(path: string, options: FileOptions = {}): Promise<FwResponse> {
  let handle
  try {
    // O_NONBLOCK: opening a FIFO would otherwise wait for a writer, holding a libuv thread; it
    // changes nothing for a regular file, and anything else is refused below.
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK)
  } catch (error) {
    throw refusal(error)
  }
  try {
    const stat = await handle.stat()
    if (!stat.isFile()) throw notFound()
    const type =
      options.contentType ??
      ((await (mimeTypes ??= import('mime-types'))).contentType(extname(path)) ||
        'application/octet-stream')
    const headers: HeaderMap = {
      'content-type': type,
      'content-length': String(stat.size),
      'last-modified': stat.mtime.toUTCString(),
      'x-content-type-options': 'nosniff',
    }
    if (options.download !== undefined && options.download !== false) {
      const { create: attachment } = await (disposition ??= import('content-disposition'))
      headers['content-disposition'] = attachment(
        options.download === true ? basename(path) : options.download,
      )
    }
    Object.assign(headers, options.headers)
    // Read at most the size just sent as Content-Length, should the file grow meanwhile.
    const body = stat.size === 0 ? '' : handle.createReadStream({ start: 0, end: stat.size - 1 })
    if (body === '') await handle.close()
    return new FwResponse(200, headers, body)
  } catch (error) {
    await handle.close()
    throw error
  }
}

function refusal(error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException | null)?.code
  if (code !== undefined && MISSING.has(code)) return notFound()
  if (code === 'EACCES' || code === 'EPERM') return forbidden()
  return error
}
