/**
 * An uploaded file (spec rule 6). Multipart parsing streams each file to a temporary file under a
 * random name; the client's filename is kept for display only and never touches a path.
 */
import { randomBytes } from 'node:crypto'
import { constants, createReadStream } from 'node:fs'
import { copyFile, rename, rm, stat, unlink } from 'node:fs/promises'
import type { Readable } from 'node:stream'

/** Upload error codes, mirroring PHP's `UPLOAD_ERR_*`. */
export const UPLOAD_ERR_OK = 0
/** The file exceeded the configured size limit. */
export const UPLOAD_ERR_INI_SIZE = 1
export const UPLOAD_ERR_FORM_SIZE = 2
/** Only part of the file arrived. */
export const UPLOAD_ERR_PARTIAL = 3
export const UPLOAD_ERR_NO_FILE = 4
export const UPLOAD_ERR_NO_TMP_DIR = 6
export const UPLOAD_ERR_CANT_WRITE = 7

export interface UploadedFileInit {
  /** Where the content is (a temporary file); null when there is none (an error). */
  path: string | null
  size: number
  clientFilename?: string | null
  clientMediaType?: string | null
  error?: number
}

/**
 * One uploaded file.
 * @example
 * const avatar = request.file('avatar')
 * if (avatar instanceof UploadedFile && avatar.getError() === UPLOAD_ERR_OK) {
 *   await avatar.moveTo(`/srv/avatars/${user.id}.png`)
 * }
 */
export class UploadedFile {
  #path: string | null
  readonly #size: number
  readonly #clientFilename: string | null
  readonly #clientMediaType: string | null
  readonly #error: number
  #state: 'ready' | 'moving' | 'moved' | 'discarded' = 'ready'
  /** The move in flight: `discard()` waits for it (a handler may not await `moveTo`). */
  #moving: Promise<void> | null = null
  /** Streams of `getStream()` not yet closed: `discard()` closes them with the file. */
  readonly #streams = new Set<Readable>()

  constructor(init: UploadedFileInit) {
    this.#path = init.path
    this.#size = init.size
    this.#clientFilename = init.clientFilename ?? null
    this.#clientMediaType = init.clientMediaType ?? null
    this.#error = init.error ?? UPLOAD_ERR_OK
  }

  /** The name the client sent. Untrusted: display it, never build a path from it. */
  getClientFilename(): string | null {
    return this.#clientFilename
  }

  /** Size in bytes. */
  getSize(): number {
    return this.#size
  }

  /** The media type the client claimed (not verified). */
  getClientMediaType(): string | null {
    return this.#clientMediaType
  }

  /** `UPLOAD_ERR_OK` (0) on success, another `UPLOAD_ERR_*` code otherwise. */
  getError(): number {
    return this.#error
  }

  /** The temporary path while the file is neither moved nor discarded. */
  getPath(): string | null {
    return this.#state === 'ready' ? this.#path : null
  }

  /** Whether `moveTo` has completed. */
  isMoved(): boolean {
    return this.#state === 'moved'
  }

  /**
   * A stream of the content. One still open when the request is cleaned up (a handler opened it
   * and never read it) is closed then, with the temp file: its descriptor would hold the deleted
   * file's disk space until garbage collection.
   */
  getStream(): Readable {
    const stream = createReadStream(this.#usablePath('read'))
    this.#streams.add(stream)
    stream.once('close', () => this.#streams.delete(stream))
    return stream
  }

  /**
   * Moves the file to `target` (a file path, overwritten if it exists). Renames, or copies and
   * unlinks when the target is on another device. A second move throws.
   */
  async moveTo(target: string): Promise<void> {
    const source = this.#usablePath('move')
    if (typeof target !== 'string' || target === '') throw new TypeError('moveTo: empty target')
    this.#state = 'moving'
    this.#moving = this.#move(source, target)
    try {
      await this.#moving
    } finally {
      this.#moving = null
    }
  }

  async #move(source: string, target: string): Promise<void> {
    try {
      if ((await stat(target).catch(() => null))?.isDirectory()) {
        throw new Error(`moveTo: ${target} is a directory; give a file path`)
      }
      await moveFile(source, target)
      this.#state = 'moved'
      this.#path = target
    } catch (error) {
      this.#state = 'ready'
      throw error
    }
  }

  /**
   * Removes the temporary file unless it was moved (the request's `cleanup()` calls this). A move
   * in flight is waited for: if it fails, the temp file is removed all the same.
   */
  async discard(): Promise<void> {
    for (const stream of this.#streams) stream.destroy()
    while (this.#moving !== null) await this.#moving.catch(() => {})
    if (this.#state !== 'ready' || this.#path === null) return
    this.#state = 'discarded'
    await rm(this.#path, { force: true })
  }

  #usablePath(action: string): string {
    if (this.#error !== UPLOAD_ERR_OK) {
      throw new Error(`Cannot ${action} an upload that failed (error ${this.#error})`)
    }
    if (this.#state !== 'ready' || this.#path === null) {
      throw new Error(`Cannot ${action} the upload: it was already ${this.#state}`)
    }
    return this.#path
  }
}

async function moveFile(source: string, target: string): Promise<void> {
  try {
    await rename(source, target)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error
    // Temp dir and target on different file systems: rename cannot cross them. The copy goes to
    // a name of its own beside the target and is renamed onto it when complete, so a copy cut
    // short (a full disk) never leaves a partial file under the target's name.
    const partial = `${target}.fw-${randomBytes(8).toString('hex')}.part`
    try {
      await copyFile(source, partial, constants.COPYFILE_EXCL)
      await rename(partial, target)
    } catch (failure) {
      await rm(partial, { force: true })
      throw failure
    }
    await unlink(source)
  }
}
