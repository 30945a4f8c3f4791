/**
 * A route the registrar's verbs return, for `withName` and `withMiddleware` to complete. It
 * writes into the route's record, and refuses calls made once registration has ended.
 */
import type { ErrorCode } from '../shared/errors.js'
import { FwError } from '../shared/errors.js'
import type { RouteRecord } from '../shared/route-record.js'
import { toList } from './arguments.js'
import { checkMiddleware, preview, type MiddlewareInput } from './options.js'

/** Throws FW_ROUTES_LATE once registration has ended (`argument` names the call in the message). */
export type AssertOpen = (call: string, argument?: unknown) => void

/**
 * A registered route; chain `withName` and `withMiddleware` to complete it.
 * @example
 * r.get('/users/{id:int}', showUser).withName('users.show').withMiddleware(['auth'])
 */
export class Route {
  readonly #record: RouteRecord
  readonly #namePrefix: string
  readonly #assertOpen: AssertOpen

  constructor(record: RouteRecord, namePrefix: string, assertOpen: AssertOpen) {
    this.#record = record
    this.#namePrefix = namePrefix
    this.#assertOpen = assertOpen
  }

  /** Names the route; the enclosing groups' name prefixes are prepended. */
  withName(name: string): this {
    this.#assertOpen('withName', name)
    if (typeof name !== 'string') {
      this.#fail(
        'FW_NAME_INVALID',
        `${this.#label()}: withName() takes a string, got ${preview(name)}`,
        'Name routes with strings such as "users.show".',
      )
    }
    this.#record.name = this.#namePrefix + name
    return this
  }

  /** Adds middleware after the groups' and any given before. */
  withMiddleware(middleware: MiddlewareInput | readonly MiddlewareInput[]): this {
    this.#assertOpen('withMiddleware')
    checkMiddleware(
      `${this.#label()}: withMiddleware()`,
      middleware,
      (code, message, hint) => this.#fail(code, message, hint),
      'Pass alias strings or middleware functions: .withMiddleware(["auth", tenant]).',
    )
    const added = toList(middleware)
    this.#record.middleware.push(...added)
    this.#record.middlewareScopes.push(...added.map(() => -1))
    return this
  }

  #label(): string {
    return `${this.#record.method} ${this.#record.path}`
  }

  // At the route's registration, where the chain usually starts. A method, not an arrow field:
  // no closure per route when the kernel re-runs a large routes file at start-up.
  #fail(code: ErrorCode, message: string, hint: string): never {
    throw new FwError(code, message, { hint, location: this.#record.location })
  }
}
