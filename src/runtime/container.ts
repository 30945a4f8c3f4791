/**
 * A small dependency-injection container: named bindings (values or lazily built singletons) and
 * tags. Service providers register into it; the kernel resolves tagged middleware and
 * 'Class@method' handlers from it.
 */

export type Factory<T = unknown> = (container: Container) => T

/** What a container and the views its factories get share. */
interface Bindings {
  factories: Map<string, Factory>
  instances: Map<string, unknown>
  tags: Map<string, string[]>
  /** The singletons being built now, outermost first: one that needs itself is a cycle. */
  building: string[]
  /** The singletons whose async factories have not settled yet. */
  pending: Set<string>
  /** The keys bound with `bind`: their factory runs at every `get`. */
  transient: Set<string>
}

/**
 * @example
 * container.singleton('mailer', () => new Mailer())
 * container.set('audit', auditMiddleware).tag('preGlobal', 'audit')
 * container.get<Mailer>('mailer')
 */
export class Container {
  #b: Bindings = {
    factories: new Map(),
    instances: new Map(),
    tags: new Map(),
    building: [],
    pending: new Set(),
    transient: new Set(),
  }
  /**
   * For the view a factory is given (its `container` argument): the singletons whose factories led
   * to it, outermost first. It outlives the factory's first await, where `building` does not.
   */
  #chain: readonly string[] = []

  /** Binds a ready value. */
  set(key: string, value: unknown): this {
    this.#b.instances.set(key, value)
    return this
  }

  /** Binds a factory run once, on first `get`. */
  singleton(key: string, factory: Factory): this {
    this.#b.instances.delete(key)
    this.#b.transient.delete(key)
    this.#b.factories.set(key, factory)
    return this
  }

  /**
   * Binds a factory run at every `get` (Laravel's `bind`): a new value each time, or whatever is
   * current, such as the request being handled (the kernel binds 'request' so).
   */
  bind(key: string, factory: Factory): this {
    this.#b.instances.delete(key)
    this.#b.transient.add(key)
    this.#b.factories.set(key, factory)
    return this
  }

  has(key: string): boolean {
    return this.#b.instances.has(key) || this.#b.factories.has(key)
  }

  get<T = unknown>(key: string): T {
    const b = this.#b
    // Async singletons that await each other through their `container` argument (a needs b, b
    // needs a) each got the other's pending promise and waited for ever: the boot, or every
    // request, hung without a word. Only a factory still pending counts: a settled singleton
    // read again, from a timer its factory started, is no cycle. (Such a callback that reads the
    // singleton before its factory settled is taken for one: it should use the root container.)
    if (this.#chain.includes(key) && b.pending.has(key)) throw circular([...this.#chain, key])
    if (b.instances.has(key)) return b.instances.get(key) as T
    const factory = b.factories.get(key)
    if (!factory) throw new Error(`Nothing is bound to "${key}" in the container`)
    // Without this, singletons that need each other overflow the stack.
    if (b.building.includes(key)) throw circular([...b.building, key])
    b.building.push(key)
    try {
      const value = factory(this.#viewFor(key))
      if (b.transient.has(key)) return value as T
      b.instances.set(key, value)
      // An async factory that fails is run again at the next get, as one that throws is. Kept,
      // its rejected promise was every later get's answer, and one nobody awaited (a handler
      // 'Key@method' reads a method of it) ended the process as an unhandled rejection.
      if (value instanceof Promise) {
        b.pending.add(key)
        value.then(
          () => b.pending.delete(key),
          () => {
            b.pending.delete(key)
            if (b.instances.get(key) === value) b.instances.delete(key)
          },
        )
      }
      return value as T
    } finally {
      b.building.pop()
    }
  }

  /** Adds bound keys to a tag (e.g. middleware for preGlobalTags). */
  tag(tag: string, ...keys: string[]): this {
    // A key is in a tag once: a provider that tags again (at each boot of `fw serve --watch`, with
    // the container of the kernel options) added its middleware to every request once more.
    const tagged = this.#b.tags.get(tag) ?? []
    for (const key of keys) if (!tagged.includes(key)) tagged.push(key)
    this.#b.tags.set(tag, tagged)
    return this
  }

  tagged<T = unknown>(tag: string): T[] {
    return (this.#b.tags.get(tag) ?? []).map((key) => this.get<T>(key))
  }

  /** This container as the factory of `key` is given it: the same bindings, a longer chain. */
  #viewFor(key: string): Container {
    const view = new Container()
    view.#b = this.#b
    view.#chain = [...this.#chain, key]
    return view
  }
}

function circular(chain: readonly string[]): Error {
  return new Error(`Circular dependency in the container: ${chain.join(' -> ')}`)
}
