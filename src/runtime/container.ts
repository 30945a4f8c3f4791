import { AsyncLocalStorage } from 'node:async_hooks'

/**
 * A small dependency-injection container: named bindings (values or lazily built singletons) and
 * tags. Service providers register into it; the kernel resolves tagged middleware and
 * 'Class@method' handlers from it.
 */

export type Factory<T = unknown> = (container: Container) => T

/**
 * @example
 * container.singleton('mailer', () => new Mailer())
 * container.set('audit', auditMiddleware).tag('preGlobal', 'audit')
 * container.get<Mailer>('mailer')
 */
export class Container {
  readonly #factories = new Map<string, Factory>()
  readonly #instances = new Map<string, unknown>()
  readonly #tags = new Map<string, string[]>()
  /** The singletons being built now, outermost first: one that needs itself is a cycle. */
  readonly #building: string[] = []
  /** Async factories not settled yet, and the keys whose factories led to the current code. */
  readonly #pending = new Set<string>()
  readonly #chain = new AsyncLocalStorage<readonly string[]>()

  /** Binds a ready value. */
  set(key: string, value: unknown): this {
    this.#instances.set(key, value)
    return this
  }

  /** Binds a factory run once, on first `get`. */
  singleton(key: string, factory: Factory): this {
    this.#instances.delete(key)
    this.#factories.set(key, factory)
    return this
  }

  has(key: string): boolean {
    return this.#instances.has(key) || this.#factories.has(key)
  }

  get<T = unknown>(key: string): T {
    // Async singletons that await each other (a needs b, b needs a) each got the other's pending
    // promise and waited for ever: the boot, or every request, hung without a word. The chain of
    // factories that led here is known across awaits; only a factory still pending counts (one
    // that has settled, read again from a timer it started, is no cycle).
    const chain = this.#pending.size === 0 ? undefined : this.#chain.getStore()
    if (chain?.includes(key) && this.#pending.has(key))
      throw new Error(`Circular dependency in the container: ${[...chain, key].join(' -> ')}`)
    if (this.#instances.has(key)) return this.#instances.get(key) as T
    const factory = this.#factories.get(key)
    if (!factory) throw new Error(`Nothing is bound to "${key}" in the container`)
    // Without this, singletons that need each other overflow the stack.
    if (this.#building.includes(key))
      throw new Error(
        `Circular dependency in the container: ${[...this.#building, key].join(' -> ')}`,
      )
    this.#building.push(key)
    try {
      const value = this.#chain.run([...(this.#chain.getStore() ?? []), key], factory, this)
      this.#instances.set(key, value)
      // An async factory that fails is run again at the next get, as one that throws is. Kept,
      // its rejected promise was every later get's answer, and one nobody awaited (a handler
      // 'Key@method' reads a method of it) ended the process as an unhandled rejection.
      if (value instanceof Promise) {
        this.#pending.add(key)
        value.then(
          () => this.#pending.delete(key),
          () => {
            this.#pending.delete(key)
            if (this.#instances.get(key) === value) this.#instances.delete(key)
          },
        )
      }
      return value as T
    } finally {
      this.#building.pop()
    }
  }

  /** Adds bound keys to a tag (e.g. middleware for preGlobalTags). */
  tag(tag: string, ...keys: string[]): this {
    // A key is in a tag once: a provider that tags again (at each boot of `fw serve --watch`, with
    // the container of the kernel options) added its middleware to every request once more.
    const tagged = this.#tags.get(tag) ?? []
    for (const key of keys) if (!tagged.includes(key)) tagged.push(key)
    this.#tags.set(tag, tagged)
    return this
  }

  tagged<T = unknown>(tag: string): T[] {
    return (this.#tags.get(tag) ?? []).map((key) => this.get<T>(key))
  }
}
