/**
 * Emits a shard module (`users.mjs`, `__root.mjs`, `__dynamic.mjs`; planned by shard-plan.ts): per
 * method, a function testing the shard's static paths then walking its trie, inside a bind()
 * that index.mjs calls with its route table.
 */
import type { AnalyzedRoute, Variant } from '../analyze.js'
import { METHOD_KEYS, type MethodKey, type TrieNode } from '../trie.js'
import { BANNER, CodeWriter, propKey, safeComment } from './code.js'
import { RegexPool } from './regex-pool.js'
import { partVariants, type Shard, type ShardPart } from './shard-plan.js'
import { copyLines, emitStatics } from './shard-statics.js'
import { emitChildren, type WalkContext } from './walk.js'
import { FUNCTION_MAX } from './walk-outline.js'
import { usesPercentSearch } from './walk-results.js'

export { partVariants, planShards, type Shard, type ShardPart } from './shard-plan.js'

export interface ShardEmitOptions {
  hostLabel: string
  /** A route's host parameter expressions for results (`"account": hp.groups.h_account`), or []. */
  hostParams: (route: AnalyzedRoute) => string[]
}

/** What the functions of one shard module share while it is emitted. */
interface ShardState {
  regexes: RegexPool
  /** Routes the module's results refer to (one `R<id>` constant each). */
  routeIds: Set<number>
  /** Routes with a hit without params (one frozen `HIT<id>` constant each). */
  hits: Set<number>
  /** Functions split off the method functions (S0…, W0…), in order. */
  functions: string[]
  /** Names taken by split-off functions, shared by the method functions. */
  named: { count: number }
  /** The expression of a hit for a variant, given its params' fields (`"id": v3`). */
  result: (variant: Variant, fields: string[]) => string
}

/** Emits one shard module. Its functions return a hit object or null. */
export function emitShard(shard: Shard, options: ShardEmitOptions): string {
  const state = createShardState(options)
  const body = new CodeWriter()
  const twin = anyTwin(shard)
  for (const method of METHOD_KEYS) {
    const part = shard.methods.get(method)
    if (!part) continue
    if (method === 'ANY' && twin !== null) emitAnyTwin(body, shard, twin)
    else emitMethodFunction(body, shard, method, part, state)
  }
  const text = body.toString() + state.functions.join('\n')
  const helpers = ['EMPTY', 'dec', 'int', 'hex', 'uuid', 'slug', 'sticky'].filter((name) =>
    name === 'EMPTY' ? state.hits.size > 0 : text.includes(`${name}(`),
  )
  return [
    BANNER(`Shard ${describe(shard)} (host: ${safeComment(options.hostLabel)}).`),
    ...(helpers.length > 0 ? [`import { ${helpers.join(', ')} } from './__helpers.mjs'`, ''] : []),
    emitBind(shard, state, text),
  ].join('\n')
}

function createShardState(options: ShardEmitOptions): ShardState {
  const routeIds = new Set<number>()
  const hits = new Set<number>()
  const result = (variant: Variant, fields: string[]): string => {
    const id = variant.route.record.id
    routeIds.add(id)
    const all = [...options.hostParams(variant.route), ...fields]
    if (all.length > 0) return `{ route: R${id}, params: { ${all.join(', ')} } }`
    hits.add(id)
    return `HIT${id}`
  }
  return { regexes: new RegexPool(), routeIds, hits, functions: [], named: { count: 0 }, result }
}

function emitAnyTwin(body: CodeWriter, shard: Shard, twin: MethodKey): void {
  body.line(
    `/** Any method ${describe(shard)}: only ${twin} routes live here, so it is the same walk. */`,
  )
  body.line(`const ANY = ${twin}`)
}

/** One method's function: its static paths, then the walk of its trie. */
function emitMethodFunction(
  body: CodeWriter,
  shard: Shard,
  method: MethodKey,
  part: ShardPart,
  state: ShardState,
): void {
  body.line(
    method === 'ANY'
      ? `/** Any method ${describe(shard)} (decides 404 or 405 on a miss). */`
      : `/** ${method} ${describe(shard)}. */`,
  )
  const signature = shard.kind === 'dynamic' ? '(path, hp)' : '(path, e1, hp)'
  body.block(`function ${method}${signature} {`, () => {
    body.line('const len = path.length')
    if (part.node && usesPercentSearch(part.node))
      body.line("let P = -1 // first '%' in a hit's parameters (-1: none), searched once per hit")
    const statics = new CodeWriter()
    const staticResult = (variant: Variant): string =>
      state.result(
        variant,
        variant.absent.map((n) => `${propKey(n)}: null`),
      )
    emitStatics(statics, part.statics, staticResult, state.functions, state.named)
    const staticText = statics.toString()
    copyLines(body, staticText)
    if (part.node) copyLines(body, walkText(shard, part.node, staticText.length, state))
    body.line('return null')
  })
  body.line()
}

/** The walk of a method's trie, split into functions only if it must be. */
function walkText(shard: Shard, node: TrieNode, staticChars: number, state: ShardState): string {
  // In one piece unless that is too large for V8 to optimise (see FUNCTION_MAX).
  let text = emitWalk(shard, node, state, false, []).toString()
  if (staticChars + text.length > FUNCTION_MAX)
    text = emitWalk(shard, node, state, true, state.functions).toString()
  return text
}

function emitWalk(
  shard: Shard,
  node: TrieNode,
  state: ShardState,
  outline: boolean,
  split: string[],
): CodeWriter {
  const out = new CodeWriter()
  const { regexes, result, named } = state
  const ctx: WalkContext = {
    out,
    regexes,
    result,
    functions: split,
    named,
    emitted: new Map(),
    outline,
  }
  if (shard.kind === 'dynamic') {
    out.line('const j1 = 1')
    emitChildren(ctx, node, 'j1', 1, [])
  } else {
    out.block('if (e1 !== len) {', () => {
      out.line('const j2 = e1 + 1')
      emitChildren(ctx, node, 'j2', 2, [])
    })
    emitEmptyCatchAll(ctx, node)
  }
  return out
}

/** `export function bind(route)`: the route and regex constants, then the method functions. */
function emitBind(shard: Shard, state: ShardState, text: string): string {
  const constants: string[] = []
  for (const id of [...state.routeIds].sort((a, b) => a - b)) {
    constants.push(`const R${id} = route(${id})`)
    if (state.hits.has(id))
      constants.push(`const HIT${id} = Object.freeze({ route: R${id}, params: EMPTY })`)
  }
  const code = new CodeWriter()
  const exported = METHOD_KEYS.filter((m) => shard.methods.has(m))
  // index.mjs loads the shard on first use and binds it to its own route table (so route
  // objects are the index's, whoever loaded this module). The helpers are imported: module
  // bindings are constant, so V8 inlines them into the walk.
  code.block('export function bind(route) {', () => {
    for (const line of [...constants, ...state.regexes.declarations()]) code.line(line)
    code.line()
    for (const line of text.trimEnd().split('\n')) code.line(line)
    code.line(`return { ${exported.join(', ')} }`)
  })
  return code.toString()
}

/**
 * The one method whose part of this shard returns exactly the variants ANY's does, or null. Then
 * ANY's walk would be the same code. (Not so when that method's static paths moved to index.mjs:
 * ANY keeps them, so the parts differ and ANY gets its own walk.)
 */
function anyTwin(shard: Shard): MethodKey | null {
  const any = shard.methods.get('ANY')
  const methods = [...shard.methods.keys()].filter((m) => m !== 'ANY')
  if (!any || methods.length !== 1) return null
  const mine = partVariants(shard.methods.get(methods[0]!)!)
  const theirs = partVariants(any)
  return mine.size === theirs.size && [...theirs].every((v) => mine.has(v)) ? methods[0]! : null
}

/** `/files/{p:.*}` also matches `/files`: at the bucket node itself the rest is empty. */
function emitEmptyCatchAll(ctx: WalkContext, node: TrieNode): void {
  const child = node.children.find(
    (c) => c.segment?.kind === 'param' && c.segment.type === 'catchall' && c.segment.allowEmpty,
  )
  if (!child || node.terminal) return
  const name = (child.segment as { name: string }).name
  const v = child.terminal!
  const absent = v.absent.map((n) => `${propKey(n)}: null`)
  ctx.out.line(`if (e1 === len) return ${ctx.result(v, [`${propKey(name)}: ''`, ...absent])}`)
}

function describe(shard: Shard): string {
  if (shard.kind === 'root') return 'for the root path "/"'
  if (shard.kind === 'dynamic') return 'for paths whose first segment is a parameter'
  return `for paths under "/${safeComment(shard.bucket)}"`
}
