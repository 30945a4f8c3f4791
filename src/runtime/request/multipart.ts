/**
 * `multipart/form-data` with busboy. Every busboy limit is set; every stream involved (busboy,
 * each file stream, each temp-file write stream) has an 'error' listener, because one missing
 * listener turns a malformed upload into a crashed process (multer, CVE-2025-47944). Files go
 * to `uploadDir` under random names; on any failure the partial temp files are removed.
 */
import type { Readable } from 'node:stream'
import busboy from 'busboy'
import {
  badRequest,
  HttpError,
  internalError,
  payloadTooLarge,
  unsupportedMediaType,
} from '../http-error.js'
import type { BodyLimits } from '../types.js'
import { multipartLimit, multipartOverhead } from './multipart-limits.js'
import { addParam, finalizeParams, utf8Text } from './query.js'
import { emptyParams, FORBIDDEN_KEYS, type Params } from './params.js'
import type { BodyStream } from './read-body.js'
import { TempUpload, type FilePart } from './temp-upload.js'
import type { UploadedFile } from './uploaded-file.js'

/**
 * Field name → file, or a list of files for `name[]` and repeated names. File field names are
 * not nested further: `doc[a]` is the key 'doc[a]'.
 */
export type FileMap = Record<string, UploadedFile | UploadedFile[]>

export interface MultipartResult {
  fields: Params
  files: FileMap
  uploads: UploadedFile[]
}

export interface MultipartOptions {
  limits: BodyLimits
  uploadDir: string
}

/**
 * Parses a multipart body. No boundary, a truncated body, a malformed part or a text field that
 * is not UTF-8 (and declares no charset) → 400; a charset busboy cannot read → 415; a file,
 * field, or count over its limit → 413, and so is a body over `multipartLimit` or carrying more
 * than the fields limit plus `multipartOverhead` besides its files (parts busboy skips, such as
 * one without Content-Disposition, and a preamble are read too); an aborted upload → 400
 * (nobody is listening by then).
 * @example
 * const { fields, files } = await parseMultipart(body, contentType, { limits, uploadDir })
 */
export function parseMultipart(
  body: BodyStream,
  contentType: string,
  options: MultipartOptions,
): Promise<MultipartResult> {
  // busboy tells no field's charset. It decodes a non-empty field that declares none by its
  // default charset, whose name it asks this object for (`toLowerCase`): that marks the field,
  // read as latin1 (a character a byte), for #onField to decode as strict UTF-8. A declared
  // charset busboy decodes itself; one it does not know gives no value.
  const charset: RawCharset = { used: false, toLowerCase: () => ((charset.used = true), 'latin1') }
  const parser = createParser(contentType, options.limits, charset)
  return new MultipartRun(body, parser, options, charset).result
}

interface RawCharset {
  used: boolean
  toLowerCase(): string
}

function createParser(contentType: string, limits: BodyLimits, charset: RawCharset): busboy.Busboy {
  try {
    return busboy({
      headers: { 'content-type': contentType },
      // Browsers send UTF-8 filenames; busboy's default for them is latin1.
      defParamCharset: 'utf8',
      defCharset: charset as unknown as string,
      limits: {
        // busboy truncates when a size *reaches* its limit; ours are inclusive, hence + 1.
        fileSize: limits.fileSize + 1,
        fieldSize: limits.body + 1,
        fieldNameSize: 1024,
        // Files are counted by MultipartRun (#countFile): an empty file input is no file. The
        // parts limit bounds what busboy sees.
        files: limits.parts + 1,
        fields: limits.fields,
        // busboy signals this limit when the count is reached, hence + 1 as well.
        parts: limits.parts + 1,
        headerPairs: 64,
      },
    })
  } catch (error) {
    throw badRequest('Malformed multipart body: missing boundary', { cause: error })
  }
}

class MultipartRun {
  readonly result: Promise<MultipartResult>
  readonly #body: BodyStream
  readonly #parser: busboy.Busboy
  readonly #options: MultipartOptions
  readonly #charset: RawCharset
  readonly #fields = emptyParams()
  readonly #uploads: TempUpload[] = []
  readonly #totalLimit: number
  readonly #otherLimit: number
  #wireBytes = 0
  #fieldBytes = 0
  #fileBytes = 0
  #fileCount = 0
  #fileParts = 0
  #settled = false
  #resolve!: (result: MultipartResult) => void
  #reject!: (error: unknown) => void

  constructor(
    body: BodyStream,
    parser: busboy.Busboy,
    options: MultipartOptions,
    charset: RawCharset,
  ) {
    this.#body = body
    this.#parser = parser
    this.#options = options
    this.#charset = charset
    this.#totalLimit = multipartLimit(options.limits)
    this.#otherLimit = options.limits.body + multipartOverhead(options.limits)
    this.result = new Promise((resolve, reject) => {
      this.#resolve = resolve
      this.#reject = reject
    })
    this.#listen()
    body.stream.on('error', (error) => this.#fail(streamError(error)))
    body.onAbort((error) => this.#fail(error))
    body.stream.on('data', this.#onBodyData)
    body.stream.pipe(parser)
  }

  // Every byte of the body counts, also those busboy reads past without an event: a preamble,
  // a part without Content-Disposition, an epilogue. What is not file content must fit in the
  // fields limit plus the overhead; file bytes are counted as they leave busboy.
  readonly #onBodyData = (chunk: Buffer): void => {
    this.#wireBytes += chunk.length
    if (this.#wireBytes - this.#fileBytes > this.#otherLimit) {
      const limit = this.#otherLimit
      this.#fail(
        payloadTooLarge(`Multipart body exceeds the limit of ${limit} bytes besides files`),
      )
    } else if (this.#wireBytes > this.#totalLimit) {
      this.#fail(payloadTooLarge(`Multipart body exceeds the limit of ${this.#totalLimit} bytes`))
    }
  }

  #listen(): void {
    const tooMany = (what: string) => () => this.#fail(payloadTooLarge(`Too many ${what}`))
    this.#parser
      .on('file', (name, stream, info) => this.#onFile(name, stream, info))
      .on('field', (name, value, info) => this.#onField(name, value, info))
      .on('fieldsLimit', tooMany(`fields (limit ${this.#options.limits.fields})`))
      .on('partsLimit', tooMany(`parts (limit ${this.#options.limits.parts})`))
      .on('error', (error) => this.#fail(malformed(error)))
      .on('close', () => void this.#complete())
  }

  #onFile(name: string | undefined, stream: Readable, info: busboy.FileInfo): void {
    stream.on('error', (error) => this.#fail(malformed(error)))
    stream.once('limit', () => {
      const limit = this.#options.limits.fileSize
      this.#fail(payloadTooLarge(`Uploaded file exceeds the limit of ${limit} bytes`))
    })
    // A browser sends an untouched <input type="file"> as filename="" (busboy: none) and no
    // content: no file, so it counts against no file limit and never touches the disk. A part
    // becomes a file by its filename, else by its first byte, which comes a tick later: `order`
    // keeps the files in the order they were sent.
    const file: FilePart = { name, info, order: this.#fileParts++ }
    if (info.filename) this.#startFile(file, stream)
    else stream.once('data', (first: Buffer) => this.#startFile(file, stream, first))
  }

  #startFile(file: FilePart, stream: Readable, first?: Buffer): void {
    this.#countFile()
    // A file we drop counts like one we keep: busboy reads it all the same.
    if (this.#settled || !usableName(file.name)) {
      if (first) this.#onFileData(first)
      return void stream.on('data', (chunk: Buffer) => this.#onFileData(chunk))
    }
    const upload = new TempUpload(this.#options.uploadDir, file.name, file)
    this.#uploads.push(upload)
    upload.file.on('error', (error) => this.#fail(storeError(error)))
    const onData = (chunk: Buffer): void => {
      upload.size += chunk.length
      this.#onFileData(chunk)
    }
    if (first) {
      upload.file.write(first)
      onData(first)
    }
    stream.on('data', onData)
    stream.pipe(upload.file)
  }

  #countFile(): void {
    const { files } = this.#options.limits
    if (++this.#fileCount > files) this.#fail(payloadTooLarge(`Too many files (limit ${files})`))
  }

  #onFileData(chunk: Buffer): void {
    this.#fileBytes += chunk.length
    // busboy caps each file; this caps them all together (20 files x 10 MiB is too much disk).
    const { totalFileSize } = this.#options.limits
    if (this.#fileBytes > totalFileSize) {
      this.#fail(payloadTooLarge(`Uploaded files exceed the total limit of ${totalFileSize} bytes`))
    }
  }

  #onField(name: string | undefined, value: string | undefined, info: busboy.FieldInfo): void {
    const raw = this.#charset.used ? Buffer.from(value!, 'latin1') : null
    this.#charset.used = false
    if (this.#settled) return
    const { body, depth } = this.#options.limits
    // Counted before the name is judged: a field we drop (no name, `__proto__`) was read too.
    this.#fieldBytes += Buffer.byteLength(name ?? '') + Buffer.byteLength(raw ?? value ?? '')
    // Each field is capped by busboy; this caps them all together, as for urlencoded bodies.
    if (info.nameTruncated || info.valueTruncated || this.#fieldBytes > body) {
      return void this.#fail(payloadTooLarge(`Form fields exceed the limit of ${body} bytes`))
    }
    // As for JSON and urlencoded bodies: never a silent U+FFFD, never a charset we cannot read.
    if (value === undefined) return void this.#fail(unsupportedMediaType('Unsupported charset'))
    try {
      const text = raw ? utf8Text(raw) : value
      if (usableName(name)) addParam(this.#fields, name, text, depth, true)
    } catch (error) {
      this.#fail(error)
    }
  }

  async #complete(): Promise<void> {
    if (this.#settled) return
    try {
      await Promise.all(this.#uploads.map((upload) => upload.written))
    } catch (error) {
      return this.#fail(storeError(error))
    }
    if (this.#settled) return
    this.#settled = true
    this.#body.stream.off('data', this.#onBodyData)
    const kept = this.#uploads.sort((a, b) => a.part.order - b.part.order)
    const uploads = kept.map((upload) => upload.toUploadedFile())
    this.#resolve({
      fields: finalizeParams(this.#fields),
      files: groupFiles(kept, uploads),
      uploads,
    })
  }

  async #fail(error: unknown): Promise<void> {
    if (this.#settled) return
    this.#settled = true
    this.#body.stream.off('data', this.#onBodyData)
    this.#body.stream.unpipe(this.#parser)
    this.#body.stop()
    // Not synchronously: we may be inside a busboy callback that still touches its state
    // (destroying it during a file 'limit' event makes busboy throw on a null stream).
    setImmediate(() => this.#parser.destroy())
    // allSettled: a failed unlink must not hide the error the client gets.
    await Promise.allSettled(this.#uploads.map((upload) => upload.remove()))
    this.#reject(error)
  }
}

function groupFiles(uploads: TempUpload[], files: UploadedFile[]): FileMap {
  const map = emptyParams() as FileMap
  uploads.forEach((upload, i) => {
    const list = upload.field.endsWith('[]')
    const key = list ? upload.field.slice(0, -2) : upload.field
    const previous = map[key]
    if (previous === undefined) map[key] = list ? [files[i]!] : files[i]!
    else map[key] = [...(Array.isArray(previous) ? previous : [previous]), files[i]!]
  })
  return map
}

function usableName(name: string | undefined): name is string {
  return typeof name === 'string' && name !== '' && !FORBIDDEN_KEYS.has(name.replace(/\[\]$/, ''))
}

function malformed(error: unknown): HttpError {
  if (error instanceof HttpError) return error
  const reason = error instanceof Error ? `: ${error.message}` : ''
  return badRequest(`Malformed multipart body${reason}`, { cause: error })
}

/** The body stream failed: a limit of the reader (its 413) as it is, anything else a 400. */
function streamError(error: unknown): HttpError {
  if (error instanceof HttpError) return error
  return badRequest('Malformed body', { cause: error })
}

function storeError(error: unknown): HttpError {
  return internalError('Could not store the uploaded file', { cause: error })
}
