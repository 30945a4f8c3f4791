/**
 * Splits one host group's method tables into shards and emits them. A shard holds every method's
 * routes under one first path segment (`users.mjs`); routes whose first segment is a parameter go
 * to `__dynamic.mjs`, the root path to `__root.mjs`. Splitting keeps each generated function far
 * below V8's ~60 KB bytecode limit for optimisation.
 */
import type { AnalyzedRoute, Variant } from '../analyze.js'
import {
  METHOD_KEYS,
  staticValue,
  type MethodKey,
  type MethodTable,
  type TrieNode,
} from '../trie.js'
import { BANNER, CodeWriter, emitStaticSwitch, propKey, safeComment } from './code.js'
import {
  emitChildren,
  RegexPool,
  usesPercentSearch,
  FUNCTION_MAX,
  type WalkContext,
} from './walk.js'

export interface ShardPart {
  statics: Map<string, Variant>
  /** The trie node of the bucket (static shards), or a root holding the dynamic children. */
  node: TrieNode | null
}

export interface Shard {
  file: string
  kind: 'bucket' | 'root' | 'dynamic'
  bucket: string
  methods: Map<MethodKey, ShardPart>
}

/**
 * Groups a host group's tables into shards, each method's part by first path segment. Static
 * paths of the methods in `inlined` are matched in index.mjs instead, so shards leave them out.
 */
export function planShards(
  tables: readonly MethodTable[],
  filePrefix: string,
  taken: Set<string>,
  inlined: ReadonlySet<MethodKey>,
): Shard[] {
  const shards = new Map<string, Shard>()
  const shardFor = (kind: Shard['kind'], bucket: string): Shard => {
    const id = `${kind}:${bucket}`
    let shard = shards.get(id)
    if (!shard) {
      const base = kind === 'bucket' ? bucket : `__${kind}`
      shard = { file: uniqueFile(filePrefix + base, taken), kind, bucket, methods: new Map() }
      shards.set(id, shard)
    }
    return shard
  }
  const partOf = (shard: Shard, method: MethodKey): ShardPart => {
    let part = shard.methods.get(method)
    if (!part) shard.methods.set(method, (part = { statics: new Map(), node: null }))
    return part
  }
  for (const table of tables) {
    for (const [path, variant] of inlined.has(table.method) ? [] : table.statics) {
      const bucket = path === '/' ? null : path.slice(1).split('/')[0]!
      partOf(
        bucket === null ? shardFor('root', '') : shardFor('bucket', bucket),
        table.method,
      ).statics.set(path, variant)
    }
    const dynamic: TrieNode[] = []
    for (const child of table.root.children) {
      const bucket = staticValue(child)
      if (bucket === null) dynamic.push(child)
      else partOf(shardFor('bucket', bucket), table.method).node = child
    }
    if (dynamic.length > 0) {
      partOf(shardFor('dynamic', ''), table.method).node = { ...table.root, children: dynamic }
    }
  }
  return sortShards([...shards.values()])
}

function sortShards(shards: Shard[]): Shard[] {
  const rank = { root: 0, bucket: 1, dynamic: 2 }
  return shards.sort((a, b) => rank[a.kind] - rank[b.kind] || (a.bucket < b.bucket ? -1 : 1))
}

/**
 * A file-system-safe, case-insensitively unique module name (without `.mjs`): a domain shard keeps
 * its host pattern's braces (`{account}.example.com.users`), legal in file names everywhere.
 */
function uniqueFile(base: string, taken: Set<string>): string {
  const safe = base
    .replace(/[^A-Za-z0-9._{}-]/g, '_')
    .replace(/^\./, '_')
    .slice(0, 80)
  let name = safe
  for (let n = 2; taken.has(name.toLowerCase()); n++) name = `${safe}~${n}`
  taken.add(name.toLowerCase())
  return name
}

export interface ShardEmitOptions {
  hostLabel: string
  /** A route's host parameter expressions for results (`"account": hp.groups.h_account`), or []. */
  hostParams: (route: AnalyzedRoute) => string[]
}

/** Emits one shard module. Its functions return a hit object or null. */
export function emitShard(shard: Shard, options: ShardEmitOptions): string {
  const regexes = new RegexPool()
  const routeIds = new Set<number>()
  const constants: string[] = []
  const body = new CodeWriter()
  const hits = new Set<number>()
  const result = (variant: Variant, fields: string[]): string => {
    const id = variant.route.record.id
    routeIds.add(id)
    const all = [...options.hostParams(variant.route), ...fields]
    if (all.length > 0) return `{ route: R${id}, params: { ${all.join(', ')} } }`
    hits.add(id)
    return `HIT${id}`
  }
  const staticResult = (variant: Variant): string =>
    result(
      variant,
      variant.absent.map((n) => `${propKey(n)}: null`),
    )
  const signature = shard.kind === 'dynamic' ? '(path, hp)' : '(path, e1, hp)'
  const twin = anyTwin(shard)
  const functions: string[] = []
  const named = { count: 0 }
  for (const method of METHOD_KEYS) {
    const part = shard.methods.get(method)
    if (!part) continue
    if (method === 'ANY' && twin !== null) {
      body.line(
        `/** Any method ${describe(shard)}: only ${twin} routes live here, so it is the same walk. */`,
      )
      body.line(`const ANY = ${twin}`)
      continue
    }
    body.line(
      method === 'ANY'
        ? `/** Any method ${describe(shard)} (decides 404 or 405 on a miss). */`
        : `/** ${method} ${describe(shard)}. */`,
    )
    body.block(`function ${method}${signature} {`, () => {
      body.line('const len = path.length')
      if (part.node && usesPercentSearch(part.node))
        body.line("let P = -1 // first '%' in a hit's parameters (-1: none), searched once per hit")
      const statics = new CodeWriter()
      emitStatics(statics, part.statics, staticResult, functions, named)
      const staticText = statics.toString()
      copyLines(body, staticText)
      const node = part.node
      if (node) {
        const walk = (out: CodeWriter, outline: boolean, split: string[]): CodeWriter => {
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
        // In one piece unless that is too large for V8 to optimise (see FUNCTION_MAX).
        let text = walk(new CodeWriter(), false, []).toString()
        if (staticText.length + text.length > FUNCTION_MAX)
          text = walk(new CodeWriter(), true, functions).toString()
        copyLines(body, text)
      }
      body.line('return null')
    })
    body.line()
  }
  for (const id of [...routeIds].sort((a, b) => a - b)) {
    constants.push(`const R${id} = route(${id})`)
    if (hits.has(id))
      constants.push(`const HIT${id} = Object.freeze({ route: R${id}, params: EMPTY })`)
  }
  const code = new CodeWriter()
  const exported = METHOD_KEYS.filter((m) => shard.methods.has(m))
  const text = body.toString() + functions.join('\n')
  const helpers = ['EMPTY', 'dec', 'int', 'hex', 'uuid', 'slug', 'sticky'].filter((name) =>
    name === 'EMPTY' ? hits.size > 0 : text.includes(`${name}(`),
  )
  // index.mjs loads the shard on first use and binds it to its own route table (so route
  // objects are the index's, whoever loaded this module). The helpers are imported: module
  // bindings are constant, so V8 inlines them into the walk.
  code.block('export function bind(route) {', () => {
    for (const line of [...constants, ...regexes.declarations()]) code.line(line)
    code.line()
    for (const line of text.trimEnd().split('\n')) code.line(line)
    code.line(`return { ${exported.join(', ')} }`)
  })
  return [
    BANNER(`Shard ${describe(shard)} (host: ${safeComment(options.hostLabel)}).`),
    ...(helpers.length > 0 ? [`import { ${helpers.join(', ')} } from './__helpers.mjs'`, ''] : []),
    code.toString(),
  ].join('\n')
}

/** Writes `text`'s lines into `out` at its current indentation. */
function copyLines(out: CodeWriter, text: string): void {
  if (text.trim() === '') return
  for (const line of text.trimEnd().split('\n')) out.line(line)
}

// Up to this many static paths, a shard function tests them in one switch; more (thousands of
// static paths under one first segment) are split by length into functions of up to this many
// each, so that no function grows past what V8 optimises (~60 KB of bytecode; see walk.ts).
const STATICS_IN_PLACE_MAX = 500
// ... and up to this many characters (the walk's own share is OUTLINE_MAX, see walk.ts).
const STATICS_IN_PLACE_CHARS = 24_000

/** The static paths of a shard part: in place, or a switch on the length calling functions. */
function emitStatics(
  out: CodeWriter,
  statics: Map<string, Variant>,
  result: (variant: Variant) => string,
  functions: string[],
  named: { count: number },
): void {
  // Bounded in characters too: 500 non-ASCII paths (`/u/caf%C3%A9…`, three characters per
  // byte) made 42 K, which with the walk passed what V8 optimises.
  const inPlace = new CodeWriter()
  if (statics.size <= STATICS_IN_PLACE_MAX) emitStaticSwitch(inPlace, statics, result)
  if (statics.size <= STATICS_IN_PLACE_MAX && inPlace.toString().length <= STATICS_IN_PLACE_CHARS) {
    copyLines(out, inPlace.toString())
    return
  }
  const byLength = new Map<number, [string, Variant][]>()
  for (const entry of statics) {
    const group = byLength.get(entry[0].length)
    if (group) group.push(entry)
    else byLength.set(entry[0].length, [entry])
  }
  // Whole lengths per function (a length of more paths than the maximum stays one function).
  const chunks: [string, Variant][][] = [[]]
  let chars = 0
  for (const [length, group] of [...byLength].sort((a, b) => a[0] - b[0])) {
    const last = chunks.at(-1)!
    // ~2 path lengths of characters per path (the test and the comparison), plus the result.
    const size = group.length * (2 * length + 40)
    if (
      last.length > 0 &&
      (last.length + group.length > STATICS_IN_PLACE_MAX || chars + size > STATICS_IN_PLACE_CHARS)
    ) {
      chunks.push([])
      chars = 0
    }
    chunks.at(-1)!.push(...group)
    chars += size
  }
  out.block('switch (len) {', () => {
    for (const chunk of chunks) {
      const name = `S${named.count++}`
      const lengths = [...new Set(chunk.map(([path]) => path.length))]
      const fn = new CodeWriter()
      fn.block(`function ${name}(path, len) {`, () => {
        emitStaticSwitch(fn, new Map(chunk), result)
        fn.line('return null')
      })
      functions.push(fn.toString())
      out.line(`${lengths.map((n) => `case ${n}:`).join(' ')}`)
      out.line(`  { const r = ${name}(path, len); if (r !== null) return r; break }`)
    }
  })
}

/** Every variant a shard part can return: its static paths and its trie's terminals. */
export function partVariants(part: ShardPart): Set<Variant> {
  const variants = new Set(part.statics.values())
  const visit = (node: TrieNode): void => {
    if (node.terminal) variants.add(node.terminal)
    for (const child of node.children) visit(child)
  }
  if (part.node) visit(part.node)
  return variants
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
