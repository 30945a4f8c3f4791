/**
 * Emits `router.d.mts`, the declarations of the cache entry, with ts-morph. Route names and their
 * parameters become an interface, so `urlFor('v1.users.show', { id: 1 })` is checked by the
 * user's TypeScript: an unknown name or a missing or mistyped parameter is a compile error.
 * Names go through `lit`: ASCII, as every file a build writes, a name beyond it as `\u` escapes,
 * which TypeScript reads as the same name (and prints as the name in its messages).
 *
 * Every name stays in the union, however many: for the 10,000 routes of the scale benchmark the
 * file is ~350 KB, and a strict tsc of a program calling urlFor checks in ~0.3 s and ~30 MB more
 * than one that does not import it (measured on TypeScript 5.9).
 */
import { GENERATED_MARK } from '../../shared/cache-format.js'
import type { ParamSegment } from '../../shared/pattern.js'
import type { AnalyzedRoute, RouteTable } from '../analyze.js'
import { lit } from './code.js'
// Types only: ts-morph itself is loaded by emitTypes, when a build is written.
import type {
  OptionalKind,
  SourceFile,
  TypeAliasDeclarationStructure,
  VariableDeclarationKind,
} from 'ts-morph'

const HEADER = `${GENERATED_MARK} - do not edit; rebuild instead.
// Types of router.mjs: route names and parameters for urlFor, and the shape of match() results.
`

/** The text of `router.d.mts` for a route table. */
export async function emitTypes(table: RouteTable): Promise<string> {
  // Loaded only when a build is written: TypeScript takes ~0.4 s to load, and an unchanged
  // build (fw serve restarting, a worker starting) writes nothing.
  const { Project, VariableDeclarationKind } = await import('ts-morph')
  const project = new Project({ useInMemoryFileSystem: true })
  const file = project.createSourceFile('router.d.mts', HEADER)
  file.addTypeAliases([...queryTypes(), ...resultTypes()])
  addRouteInfo(file)
  addFunctions(file)
  addUrlGenerationError(file)
  addConstants(file, VariableDeclarationKind.Const)
  addRouteParams(file, table)
  return file.getFullText()
}

type TypeAlias = OptionalKind<TypeAliasDeclarationStructure>

/** RouteName, and the types of urlFor's query. */
function queryTypes(): TypeAlias[] {
  return [
    { name: 'RouteName', isExported: true, type: 'keyof RouteParams' },
    {
      name: 'QueryValue',
      isExported: true,
      docs: [
        'A query value: arrays and plain objects, nested, are written with bracketed keys (`range[from]=1`).',
      ],
      type:
        'string | number | boolean | null | undefined | ReadonlyArray<QueryValue>' +
        ' | { readonly [key: string]: QueryValue }',
    },
    // urlFor's query is checked key by key against the object given: Record<string, QueryValue>
    // refused any object typed with an interface (`filters: Filters`), which has no index
    // signature. Not a homomorphic mapped type, which would let a string or an array through as
    // itself: here their methods are keys, and no method is a QueryValue. A function or a symbol
    // maps to QueryValue, so that tsc's message names that type.
    {
      name: 'Query',
      isExported: true,
      typeParameters: [{ name: 'Q' }],
      docs: ['A query object: each value a QueryValue; an object typed with an interface too.'],
      type: '{ readonly [K in keyof Q & (string | number)]?: QueryItem<Q[K]> }',
    },
    {
      name: 'QueryEntries',
      isExported: true,
      docs: [
        'A query as entries: each key once, or (URLSearchParams) repeated, written as a list.',
      ],
      type: 'URLSearchParams | ReadonlyMap<string, QueryValue>',
    },
    {
      name: 'QueryItem',
      typeParameters: [{ name: 'V' }],
      type:
        'V extends string | number | boolean | null | undefined ? V\n' +
        '  : V extends ReadonlyArray<infer E> ? ReadonlyArray<QueryItem<E>>\n' +
        '  : V extends (...args: never) => unknown ? QueryValue\n' +
        '  : V extends object ? Query<V> : QueryValue',
    },
  ]
}

/** The arguments of urlFor after the name, and what match() returns. */
function resultTypes(): TypeAlias[] {
  return [
    {
      name: 'UrlArgs',
      isExported: true,
      typeParameters: [
        { name: 'N', constraint: 'RouteName' },
        { name: 'Q', default: 'Record<string, QueryValue>' },
      ],
      docs: ['The arguments after the name: params are required when the route has required ones.'],
      type:
        '{} extends RouteParams[N]\n' +
        '  ? [params?: RouteParams[N], query?: Q | QueryEntries, absolute?: boolean | string]\n' +
        '  : [params: RouteParams[N], query?: Q | QueryEntries, absolute?: boolean | string]',
    },
    {
      name: 'MatchResult',
      isExported: true,
      type:
        '| { route: RouteInfo; params: Readonly<Record<string, string | number | null>> }\n' +
        '  | { status: 404 }\n  | { status: 405; allow: string[] }\n  | { status: 400 }',
    },
  ]
}

function addRouteInfo(file: SourceFile): void {
  file.addInterface({
    name: 'RouteInfo',
    isExported: true,
    properties: [
      ['id', 'number'],
      ['method', 'string'],
      ['host', 'string | null'],
      ['path', 'string'],
      ['name', 'string | null'],
      ['middleware', 'readonly string[]'],
      ['handler', 'string'],
    ].map(([name, type]) => ({ name: name!, type: type!, isReadonly: true })),
  })
}

/** match(), urlFor(), setBaseUrl() and load(). */
function addFunctions(file: SourceFile): void {
  file.addFunctions([
    declareFunction(
      'match',
      [
        ['method', 'string'],
        ['path', 'string'],
        ['host?', 'string | null'],
      ],
      'MatchResult',
    ),
    {
      ...declareFunction(
        'urlFor',
        [
          ['name', 'N'],
          ['...args', 'UrlArgs<N, Q>'],
        ],
        'string',
      ),
      typeParameters: [
        { name: 'N', constraint: 'RouteName' },
        { name: 'Q', constraint: 'Query<Q>', default: '{}' },
      ],
    },
    declareFunction('setBaseUrl', [['url', 'string']], 'void'),
    declareFunction('load', [], 'Promise<void>'),
  ])
}

function addUrlGenerationError(file: SourceFile): void {
  file.addClass({
    name: 'UrlGenerationError',
    isExported: true,
    hasDeclareKeyword: true,
    extends: 'Error',
    properties: [
      {
        name: 'code',
        type: "'FW_URL_UNKNOWN_ROUTE' | 'FW_URL_PARAM' | 'FW_URL_BASE'",
        isReadonly: true,
      },
    ],
  })
}

/** routes, FINGERPRINT, FORMAT_VERSION and GENERATION (`kind`: ts-morph's const, loaded late). */
function addConstants(file: SourceFile, kind: VariableDeclarationKind): void {
  file.addVariableStatement({
    isExported: true,
    hasDeclareKeyword: true,
    declarationKind: kind,
    declarations: [
      { name: 'routes', type: 'readonly RouteInfo[]' },
      { name: 'FINGERPRINT', type: 'string' },
      { name: 'FORMAT_VERSION', type: 'number' },
      { name: 'GENERATION', type: 'string' },
    ],
  })
}

/** The RouteParams interface: each named route's parameters. */
function addRouteParams(file: SourceFile, table: RouteTable): void {
  // The route interface goes in last, as one text insertion: built from 10,000 property
  // structures it would take seconds; written with ts-morph's writer it takes milliseconds.
  // Routes whose parameters have one shape share one type: the last of them has the literal, the
  // others name it (`RouteParams["v1.users.show"]`). With a literal per route, tsc took
  // RouteParams[RouteName], the contextual type of every params object urlFor is given while the
  // name is inferred, as a union of one member per route, and each call cost time in proportion
  // to the table (500 calls over the 10,000 benchmark routes: 6 s of checking, not 1.5 s).
  // Messages still print the shape itself.
  const named = table.routes.flatMap((route) =>
    route.record.name === null
      ? []
      : [{ name: lit(route.record.name), params: routeParams(route) }],
  )
  const lastOfShape = new Map(named.map(({ name, params }) => [params, name]))
  file.addStatements((writer) => {
    writer.writeLine('/** Parameters of every named route, by name. */')
    writer.write('export interface RouteParams').block(() => {
      for (const { name, params } of named) {
        const last = lastOfShape.get(params)!
        const shared = last !== name && params !== NO_PARAMS
        writer.writeLine(`${name}: ${shared ? `RouteParams[${last}]` : params};`)
      }
    })
  })
}

// The members of TypeScript's `Object` interface (lib.es5.d.ts).
const OBJECT_MEMBERS = new Set([
  'constructor',
  'toString',
  'toLocaleString',
  'valueOf',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
])

// Already one type in tsc (instantiations of an alias are shared), and clearer written out.
const NO_PARAMS = 'Record<string, never>'

function routeParams(route: AnalyzedRoute): string {
  const params = [...(route.hostSegments ?? []), ...route.segments].filter(
    (s): s is ParamSegment => s.kind === 'param',
  )
  const fields = params.map((p) => {
    const type = p.type === 'int' ? 'number' : 'string | number'
    // undefined is left out like null (written out for exactOptionalPropertyTypes). To tsc an
    // object without a `valueOf` key still has Object's method of that name, which an optional
    // `valueOf` parameter must accept, or leaving it out fails; urlFor ignores inherited keys.
    const inherited = OBJECT_MEMBERS.has(p.name) ? ` | Object[${lit(p.name)}]` : ''
    return p.optional
      ? `${lit(p.name)}?: ${type} | null | undefined${inherited}`
      : `${lit(p.name)}: ${type}`
  })
  return fields.length === 0 ? NO_PARAMS : `{ ${fields.join('; ')} }`
}

function declareFunction(name: string, params: string[][], returnType: string) {
  return {
    name,
    isExported: true,
    hasDeclareKeyword: true,
    parameters: params.map(([n, type]) => ({
      name: n!.replace(/^\.\.\.|\?$/g, ''),
      type: type!,
      hasQuestionToken: n!.endsWith('?'),
      isRestParameter: n!.startsWith('...'),
    })),
    returnType,
  }
}
