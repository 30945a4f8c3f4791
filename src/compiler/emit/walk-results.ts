/**
 * The hit a walk returns: the expression of each parameter's value, sliced from the path and
 * decoded only when it may hold a '%' escape.
 */
import type { ParamSegment } from '../../shared/pattern.js'
import type { Variant } from '../analyze.js'
import type { TrieNode } from '../trie.js'
import { propKey } from './code.js'
import type { Binding, WalkContext } from './walk.js'

/** The result expression of a hit on `variant`, with the values of its parameters. */
export function terminalResult(ctx: WalkContext, variant: Variant, bindings: Binding[]): string {
  const params = variant.segments.filter((s): s is ParamSegment => s.kind === 'param')
  // Two or more values that may hold a '%' share one search: P, the first '%' from the first of
  // them (-1: none, so every value is a plain slice). Declared by the shard function.
  const shared = bindings.filter(mayNeedDecoding).length >= 2
  let searched = false
  const fields = params.map((segment, i) => {
    const binding = bindings[i]!
    if (!shared || !mayNeedDecoding(binding)) return `${propKey(segment.name)}: ${valueOf(binding)}`
    const { start, end } = binding
    const test = searched ? 'P === -1' : `(P = path.indexOf('%', ${start})) === -1`
    searched = true
    return `${propKey(segment.name)}: ${test} ? path.slice(${start}, ${end}) : dec(path, ${start}, ${end})`
  })
  const absent = variant.absent.map((name) => `${propKey(name)}: null`)
  return ctx.result(variant, [...fields, ...absent])
}

// Built-in types match only [0-9A-Za-z-]: no '%' to decode.
const PLAIN_TYPES = new Set(['int', 'uuid', 'hex', 'slug'])

/** Whether a value of `segment` may hold a '%' escape (and is decoded then). */
function mayHoldEscapes(segment: ParamSegment): boolean {
  return !PLAIN_TYPES.has(segment.type)
}

/** Whether this binding's value may need decoding (an empty catch-all's '' never does). */
function mayNeedDecoding(binding: Binding): boolean {
  return binding.start !== "''" && mayHoldEscapes(binding.segment)
}

/**
 * Whether a hit under `node` may share a '%' search between parameters (see terminalResult):
 * a conservative bound, as it cannot see empty catch-alls, so `P` may be declared and unused.
 */
export function usesPercentSearch(node: TrieNode): boolean {
  const decodable =
    node.terminal?.segments.filter((s) => s.kind === 'param' && mayHoldEscapes(s)).length ?? 0
  return decodable >= 2 || node.children.some(usesPercentSearch)
}

function valueOf(binding: Binding): string {
  if (binding.int) return binding.int
  if (binding.start === "''") return "''"
  return `${mayHoldEscapes(binding.segment) ? 'dec(path, ' : 'path.slice('}${binding.start}, ${binding.end})`
}
