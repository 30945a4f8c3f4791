/**
 * The request's attributes (spec: getAttribute/withAttribute): those given at construction in a
 * Map, and those added later as a chain of nodes shared by every copy made from the request.
 */

/**
 * Attributes added after construction, newest first. Middleware adds several per request, so
 * `withAttribute` is O(1): a new node on a shared chain, not a copy of the whole state.
 */
export class Attribute<R = unknown> {
  #value: unknown
  #compute: ((request: R) => unknown) | null

  /** `value` is the request to compute from when `compute` is given. */
  constructor(
    readonly name: string,
    value: unknown,
    readonly removed: boolean,
    readonly next: Attribute<R> | null,
    compute: ((request: R) => unknown) | null = null,
  ) {
    this.#value = value
    this.#compute = compute
  }

  /** The value; a computed one is computed on first read, once for every copy sharing the node. */
  get value(): unknown {
    if (this.#compute !== null) {
      const compute = this.#compute
      this.#compute = null
      this.#value = compute(this.#value as R)
    }
    return this.#value
  }
}

/**
 * The value of attribute `name`: the newest node naming it, else the constructed one.
 * @example
 * const id = attributeOf(chain, initial, 'request_id', null)
 */
export function attributeOf<T, R>(
  chain: Attribute<R> | null,
  initial: ReadonlyMap<string, unknown>,
  name: string,
  fallback: T | null,
): T | null {
  // This is the hot path (route.params, request_id): a walk of a few nodes, no allocation.
  for (let node = chain; node !== null; node = node.next) {
    if (node.name === name) return node.removed ? fallback : (node.value as T)
  }
  return initial.has(name) ? (initial.get(name) as T) : fallback
}

/**
 * Every attribute as an object, oldest first, without the removed ones.
 * @example
 * allAttributes(chain, initial) // { request_id: '…', 'route.name': 'users.show' }
 */
export function allAttributes<R>(
  chain: Attribute<R> | null,
  initial: ReadonlyMap<string, unknown>,
): Record<string, unknown> {
  const all = new Map(initial)
  const added: Attribute<R>[] = []
  for (let node = chain; node !== null; node = node.next) added.push(node)
  for (const node of added.reverse()) {
    if (node.removed) all.delete(node.name)
    else all.set(node.name, node.value)
  }
  return Object.fromEntries(all)
}
