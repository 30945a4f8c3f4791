/**
 * The body of a request, shared by every instance derived from it: `loadBody()` reads the wire
 * once, and copies made before or after see the same result. `withBody`/`withParsedBody` put a
 * new slot (or a layer over the old one) on the copy.
 */
import type { Readable } from 'node:stream'
import type { BodyLimits } from '../types.js'
import { bodyKind, contentBody, emptyBody, type BodyData, type BodyKind } from './content.js'
import { firstOf, type HeaderBag } from './headers.js'
import { multipartLimit } from './multipart-limits.js'
import { parseMultipart } from './multipart.js'
import { checkDeclaredLength, openBody, readAll, readPlain, type BodyStream } from './read-body.js'
import type { UploadedFile } from './uploaded-file.js'

export interface WireBody {
  /** Opens the request stream, or gives null when the request has no body. */
  open: () => Readable | null
  /** Called once, just before the body is read (a Node server sends "100 Continue" there). */
  askForBody?: () => void
  contentType: string | undefined
  contentEncoding: string | undefined
  contentLength: string | undefined
  limits: BodyLimits
  uploadDir: string
}

/** In-process content, parsed by the Content-Type the request has when it is read. */
interface Content {
  /** The Content-Type the slot was built for. */
  readonly type: string | undefined
  /** The slot for the same content under another Content-Type. */
  readonly remake: (type: string | undefined) => BodySlot
}

/** One request's body, loaded at most once. */
export class BodySlot {
  /** Reads the body, hands it to `accept` (synchronously, before its promise resolves). */
  readonly #loader: ((accept: (data: BodyData) => void) => Promise<void>) | null
  #promise: Promise<void> | null = null
  #data: BodyData | null
  #error: unknown = null
  #uploads: readonly UploadedFile[] = []
  #base: BodySlot | null = null
  #content: Content | null = null

  private constructor(
    data: BodyData | null,
    loader: ((accept: (data: BodyData) => void) => Promise<void>) | null,
  ) {
    this.#data = data
    this.#loader = loader
  }

  /** A slot that already holds its body. */
  static loaded(data: BodyData): BodySlot {
    return new BodySlot(data, null)
  }

  /** A slot whose body was refused unread (over a limit): loading and reading throw `error`. */
  static failed(error: unknown): BodySlot {
    const slot = new BodySlot(null, () => Promise.reject(error))
    slot.#error = error
    return slot
  }

  /** A slot read from the wire on the first `load()`. */
  static fromWire(wire: WireBody): BodySlot {
    return new BodySlot(null, (accept) => loadWire(wire, accept))
  }

  /**
   * A slot for in-process content (`create()`'s body, `withBody`), made by `build` for the
   * Content-Type `type`; `forHeaders` makes it again when the request's type changes.
   */
  static content(
    type: string | undefined,
    build: (type: string | undefined) => BodySlot,
  ): BodySlot {
    const slot = build(type)
    slot.#content = { type, remake: (other) => BodySlot.content(other, build) }
    return slot
  }

  /** A layer over `base` replacing some of its parts; loading it loads the base. */
  static overlay(base: BodySlot, patch: (base: BodyData) => Partial<BodyData>): BodySlot {
    const apply = (data: BodyData): BodyData => {
      const parts = patch(data)
      // A layer that replaces the value must not hand over the base's (see BodyData.own).
      return 'value' in parts ? { ...data, own: undefined, ...parts } : { ...data, ...parts }
    }
    const slot = new BodySlot(base.isLoaded() ? apply(base.data) : null, (accept) =>
      base.load().then(() => accept(apply(base.data))),
    )
    slot.#base = base
    const content = base.#content
    if (content !== null) {
      const remake = (type: string | undefined): BodySlot =>
        BodySlot.overlay(content.remake(type), patch)
      slot.#content = { type: content.type, remake }
    }
    return slot
  }

  /**
   * The body as a request with `headers` reads it. In-process content, here or under a layer, is
   * parsed by the Content-Type the request has (set after `withBody`, say), so a changed type
   * gives a new slot; a body from the wire is read once, by the type it was sent with.
   */
  forHeaders(headers: HeaderBag): BodySlot {
    const content = this.#content
    if (content === null) return this
    const type = firstOf(headers, 'content-type')
    return type === content.type ? this : content.remake(type)
  }

  /** Reads and parses the body; idempotent, and a failure is the same failure every time. */
  load(): Promise<void> {
    if (this.#data !== null) return Promise.resolve()
    this.#promise ??= this.#run()
    return this.#promise
  }

  isLoaded(): boolean {
    return this.#data !== null
  }

  /** The loaded body; throws when `load()` has not resolved. */
  get data(): BodyData {
    if (this.#data !== null) return this.#data
    if (this.#error !== null) throw this.#error
    throw new Error(
      'The request body is not loaded yet: await request.loadBody() before reading it (the kernel loads it just before the handler, after the middleware)',
    )
  }

  /**
   * Whether `cleanup()` may have anything to do: a load still running or that left uploads, or an
   * overlay. A body read without uploads (JSON, forms) has nothing to remove.
   */
  needsCleanup(): boolean {
    if (this.#base !== null) return true
    return this.#promise !== null && (this.#data === null || this.#uploads.length > 0)
  }

  /** Removes temporary files of uploads this slot created and that were not moved. */
  async cleanup(): Promise<void> {
    await this.#promise?.catch(() => {})
    await this.#base?.cleanup()
    await Promise.all(this.#uploads.map((file) => file.discard()))
  }

  // The loader stores the body through accept() before its promise resolves, and the failure is
  // recorded on a side branch (reactions run in order: before any caller's): whoever awaits
  // load() resumes one microtask after the last byte, not three.
  #run(): Promise<void> {
    let loading: Promise<void>
    try {
      loading = this.#loader!((data) => this.#accept(data))
    } catch (error) {
      loading = Promise.reject(error)
    }
    loading.catch((error: unknown) => {
      this.#error = error
    })
    return loading
  }

  #accept(data: BodyData): void {
    // Only a slot that read the wire owns its files; a layer's files belong to whoever gave them.
    if (this.#base === null) this.#uploads = Object.values(data.files).flat()
    this.#data = data
  }
}

/**
 * The most bytes a body may have as received: a multipart body's total; any other body's limit,
 * which a compressed body must keep on the wire as well as once decoded (40 MiB of empty deflate
 * blocks decode to almost nothing).
 */
function wireLimit(kind: BodyKind, limits: BodyLimits): number {
  return kind === 'multipart' ? multipartLimit(limits) : limits.body
}

/** Reads a body off the wire by its Content-Type and Content-Encoding, into `accept`. */
function loadWire(wire: WireBody, accept: (data: BodyData) => void): Promise<void> {
  const kind = bodyKind(wire.contentType)
  const limit = wireLimit(kind, wire.limits)
  // A declared length over the limit is refused before the client is asked for the body: one
  // waiting for "100 Continue" then never uploads it.
  try {
    checkDeclaredLength(wire.contentLength, limit)
  } catch (error) {
    wire.open()?.resume() // drain it: a small rest keeps the connection usable (the node adapter closes it after a large one)
    return Promise.reject(error)
  }
  wire.askForBody?.()
  // No body at all (no Content-Length or Transfer-Encoding, a web Request whose body is null)
  // is an empty body whatever the method and type. Multipart content that is there but empty
  // goes through busboy like any other: RFC 2046 has no empty form (a part, then the close
  // delimiter), so it gets the same 400 as a truncated upload.
  const origin = wire.open()
  if (origin === null) {
    accept(emptyBody())
    return Promise.resolve()
  }
  if (kind === 'multipart' || !isIdentity(wire.contentEncoding)) {
    return loadDecoded(origin, kind, wire, limit).then(accept)
  }
  return readPlain(origin, wire.limits.body, (raw) =>
    accept(parsed(contentBody(raw, kind, wire.limits))),
  )
}

// Parse now: a malformed body is the loader's 400, not the handler's surprise.
function parsed(data: BodyData): BodyData {
  data.value()
  return data
}

/** Multipart, or a compressed body (`limit` bytes received at most): through `openBody`. */
async function loadDecoded(
  origin: Readable,
  kind: BodyKind,
  wire: WireBody,
  limit: number,
): Promise<BodyData> {
  const body = openBody(origin, wire.contentEncoding, limit)
  try {
    if (kind === 'multipart') return await loadMultipart(body, wire)
    // A compressed body's declared length says nothing about its decoded size: counted as read.
    return parsed(contentBody(await readAll(body, wire.limits.body), kind, wire.limits))
  } catch (error) {
    body.stop()
    throw error
  }
}

function isIdentity(encoding: string | undefined): boolean {
  return encoding === undefined || encoding.trim().toLowerCase() === 'identity'
}

async function loadMultipart(body: BodyStream, wire: WireBody): Promise<BodyData> {
  const result = await parseMultipart(body, wire.contentType!, wire)
  return { raw: Buffer.alloc(0), kind: 'form', value: () => result.fields, files: result.files }
}
