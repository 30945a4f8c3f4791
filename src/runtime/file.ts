/**
 * A file as the response (Laravel's `response()->file()` and `->download()`): the file is opened
 * and checked before anything is sent, so a missing one is a 404 rather than a 200 cut short.
 */
import { constants } from 'node:fs'
import { open, type FileHandle } from 'node:fs/promises'
import type { Stats } from 'node:fs'
import { basename, extname } from 'node:path'
import { planFile, type FilePlan } from './file-conditions.js'
import { forbidden, HttpError, notFound, type HeaderMap } from './http-error.js'
import type { FwRequest } from './request/request.js'
import { FwResponse } from './response.js'
import { checkOptions, optionNames } from '../shared/option-names.js'

export interface FileOptions {
  /** Content-Type; by default from the file's extension, else `application/octet-stream`. */
  contentType?: string | undefined
  /**
   * Send as an attachment (Content-Disposition): `true` under the file's own name, or a name (its
   * last path segment: a name is never a path); `false` or `''`, inline.
   */
  download?: boolean | string | undefined
  /** More headers (they win over the computed ones, but for Content-Length and Transfer-Encoding). */
  headers?: HeaderMap | undefined
  /**
   * The request being answered. With it, a GET or HEAD gets what caches and download managers
   * expect: 304 for If-None-Match / If-Modified-Since, 412 for a failed If-Match /
   * If-Unmodified-Since, 206 for one byte range (Range, If-Range), 416 for a range past the end.
   */
  request?: FwRequest | undefined
}

const FILE_OPTIONS = optionNames<FileOptions>({
  contentType: 1,
  download: 1,
  headers: 1,
  request: 1,
})

// Loaded on first use: mime-types reads a 200 KB type database that an app which never sends a
// file should not pay for at start-up.
let mimeTypes: Promise<typeof import('mime-types')> | undefined
let disposition: Promise<typeof import('content-disposition')> | undefined

// Errors that mean "nothing to send at this path": a 404, like any other missing resource. A
// socket (or a device without a driver) refuses to be opened: ENXIO, ENODEV, no file either.
const MISSING = new Set(['ENOENT', 'ENOTDIR', 'EISDIR', 'ENAMETOOLONG', 'ELOOP', 'ENXIO', 'ENODEV'])

/**
 * 200 with the file at `path` streamed, Content-Type, Content-Length, Last-Modified and a weak
 * ETag (size and modification time, as Express's). A path that does not name a regular file is a
 * 404, one the process may not read a 403. Keep a path built from request input inside its
 * folder with `safePath()` first. Give `request` for 304, 206 and 416 answers.
 * @example
 * r.get('/files/{path:.*}', (req, path) => file(safePath('public', path), { request: req }))
 * r.get('/invoices/{id:int}', (req, id) => file(`invoices/${id}.pdf`, { download: `invoice-${id}.pdf` }))
 */
export async function file(path: string, options: FileOptions = {}): Promise<FwResponse> {
  // Per request, unlike the other option checks: a walk over at most four keys, 30-60 ns
  // (measured, Node 20) beside the open, stat and stream of a file() (~165 µs). Unchecked,
  // `downlaod: 'a.pdf'` sent the file inline.
  checkOptions('file()', options, FILE_OPTIONS)
  // A NUL byte names no file (the file system would cut the path there): a 404, as safePath's.
  if (path.includes('\0')) throw notFound()
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
    const headers = Object.assign(
      await fileHeaders(path, stat, options),
      without(options.headers, FRAMING),
    )
    // Checked against the validators sent, the caller's own ETag or Last-Modified included: a
    // client revalidates with what it got.
    const plan = options.request
      ? await planFile(options.request, {
          etag: String(headers.etag),
          lastModified: String(headers['last-modified']),
          size: stat.size,
        })
      : WHOLE
    if (options.request) headers['accept-ranges'] ??= 'bytes'
    const response = answer(plan, headers, stat.size, handle)
    if (response.body === '' || response.body === null) await handle.close()
    return response
  } catch (error) {
    await handle.close()
    throw error
  }
}

const WHOLE: FilePlan = { status: 200 }

async function fileHeaders(path: string, stat: Stats, options: FileOptions): Promise<HeaderMap> {
  const type =
    options.contentType ??
    ((await (mimeTypes ??= import('mime-types'))).contentType(extname(path)) ||
      'application/octet-stream')
  const headers: HeaderMap = {
    'content-type': type,
    'content-length': String(stat.size),
    // Never after the Date it is sent with (RFC 9110 §8.8.2.1): a file stamped in the future (a
    // clock off where it was written) then answered 304 to every later version of itself.
    'last-modified': new Date(Math.min(stat.mtimeMs, Date.now())).toUTCString(),
    etag: `W/"${stat.size.toString(16)}-${Math.floor(stat.mtimeMs).toString(16)}"`,
    'x-content-type-options': 'nosniff',
  }
  if (options.download !== undefined && options.download !== false && options.download !== '') {
    const { create: attachment } = await (disposition ??= import('content-disposition'))
    // A name is a name, never a path (`../../etc/passwd` suggests `passwd`), as with true.
    const name = basename(options.download === true ? path : options.download.replaceAll('\\', '/'))
    // A lone surrogate (half an emoji, cut) has no UTF-8 form: filename* could not encode it.
    headers['content-disposition'] = attachment(name.replace(/\p{Surrogate}/gu, '\uFFFD'))
  }
  return headers
}

/** The response `plan` calls for; its body reads at most `size` bytes (the file may grow). */
function answer(plan: FilePlan, headers: HeaderMap, size: number, handle: FileHandle): FwResponse {
  switch (plan.status) {
    case 304:
      // No body, so no Content-Length: a 304 may only state the 200's (RFC 9110 §8.6).
      return new FwResponse(304, without(headers, REPRESENTATION), null)
    case 412:
      throw new HttpError(412)
    case 416:
      throw new HttpError(416, { headers: { 'content-range': `bytes */${size}` } })
    case 206:
      headers['content-range'] = `bytes ${plan.start}-${plan.end}/${size}`
      headers['content-length'] = String(plan.end - plan.start + 1)
      return new FwResponse(206, headers, handle.createReadStream(plan))
    default:
      return new FwResponse(
        200,
        headers,
        size === 0 ? '' : handle.createReadStream({ end: size - 1 }),
      )
  }
}

// A 304 carries the validators and caching headers of the 200 it stands for, not its
// representation's (RFC 9110 §15.4.5).
const REPRESENTATION = /^content-(type|length|disposition)$/i

// The caller's headers win over the computed ones, but for the length: that one is the file's
// (or the range's), and another would cut the body short or desync the connection.
const FRAMING = /^(content-length|transfer-encoding)$/i

/** `headers` with lowercase names, but those `dropped` matches. */
function without(headers: HeaderMap | undefined, dropped: RegExp): HeaderMap {
  const kept: HeaderMap = {}
  for (const [name, value] of Object.entries(headers ?? {}))
    if (!dropped.test(name)) kept[name.toLowerCase()] = value
  return kept
}

function refusal(error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException | null)?.code
  if (code !== undefined && MISSING.has(code)) return notFound()
  if (code === 'EACCES' || code === 'EPERM') return forbidden()
  return error
}
