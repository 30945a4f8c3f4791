/**
 * One uploaded file on its way to disk during a multipart parse (multipart.ts): a temp file under
 * a random name, written with an exclusive create, and removed only once its descriptor is closed.
 */
import { randomBytes } from 'node:crypto'
import { createWriteStream, type WriteStream } from 'node:fs'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import type busboy from 'busboy'
import { sweepNow } from './upload-sweep.js'
import { UploadedFile } from './uploaded-file.js'

/** A file part: its field name, what busboy says of it, its position among the file parts. */
export interface FilePart {
  name: string | undefined
  info: busboy.FileInfo
  order: number
}

/** One file being written to disk. */
export class TempUpload {
  readonly path: string
  readonly field: string
  readonly part: FilePart
  readonly file: WriteStream
  readonly written: Promise<void>
  readonly #closed: Promise<void>
  size = 0

  constructor(dir: string, field: string, part: FilePart) {
    // The client's filename never reaches the file system: 128 random bits name the file.
    this.path = join(dir, `fw-upload-${randomBytes(16).toString('hex')}`)
    void sweepNow(dir)
    this.field = field
    this.part = part
    this.file = createWriteStream(this.path, { flags: 'wx', mode: 0o600 })
    this.written = new Promise((resolve, reject) => {
      this.file.once('finish', resolve).once('error', reject)
    })
    this.written.catch(() => {}) // the 'error' listener in MultipartRun reports it
    this.#closed = new Promise((resolve) => this.file.once('close', resolve))
  }

  /** Waits until the descriptor is closed, then unlinks: removing earlier could race the open. */
  async remove(): Promise<void> {
    this.file.destroy()
    await this.#closed
    await rm(this.path, { force: true })
  }

  toUploadedFile(): UploadedFile {
    return new UploadedFile({
      path: this.path,
      size: this.size,
      // busboy gives '' for a name without a base name ('.', 'dir/'): no name either.
      clientFilename: this.part.info.filename || null,
      clientMediaType: this.part.info.mimeType,
    })
  }
}
