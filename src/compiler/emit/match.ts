/**
 * Emits the entry functions of `index.mjs`: match() (method dispatch, trailing slash, the
 * normal-form retry for equivalent %-spellings, 400 on a malformed escape), the 404/405 decision
 * on a miss, and urlFor().
 */
import type { HttpMethod } from '../../shared/methods.js'
import { lit, type CodeWriter } from './code.js'

/** Writes match() and urlFor() with what they call, after the method functions of `index.mjs`. */
export function emitMatch(
  out: CodeWriter,
  methods: HttpMethod[],
  {
    explicitHead,
    hasHosts,
    usesNoneIn,
    urlChecks,
  }: { explicitHead: boolean; hasHosts: boolean; usesNoneIn: boolean; urlChecks: boolean },
): void {
  if (methods.includes('HEAD')) emitHead(out, explicitHead, methods.includes('GET'))
  out.line(`const ALLOWABLE = [${methods.map((m) => `[${lit(m)}, ${m}]`).join(', ')}]`)
  out.line()
  if (usesNoneIn) emitNoneIn(out)
  emitMissHandlers(out)
  emitMatchEntry(out, methods, hasHosts)
  emitRetries(out, methods)
  out.line('let NAMES = null')
  if (urlChecks) emitCheckedUrlFor(out)
  else emitUrlFor(out)
}

function emitHead(out: CodeWriter, explicitHead: boolean, hasGet: boolean): void {
  out.line('// HEAD: explicit HEAD routes first, then GET routes.')
  const head = !explicitHead
    ? 'GET(path, host)'
    : hasGet
      ? 'HEAD_ONLY(path, host) ?? GET(path, host)'
      : 'HEAD_ONLY(path, host)'
  out.line(`function HEAD(path, host) { return ${head} }`)
  out.line()
}

function emitNoneIn(out: CodeWriter): void {
  out.line(
    "/** Whether a shard's any-method walk finds nothing (a malformed escape: it may, miss() decides). */",
  )
  out.block('function noneIn(any, path, e1, hp) {', () => {
    out.block('try {', () => out.line('return any(path, e1, hp) === null'), '} catch (error) {')
    out.line('  return escapeFailed(error)')
    out.line('}')
  })
  out.line()
}

/** escapeFailed(), settled() and miss(): what decides between 404 and 405. */
function emitMissHandlers(out: CodeWriter): void {
  out.line(
    '/** false for a walk that threw on an escape (a hit may still be there); anything else, such as a damaged cache file, is thrown on. */',
  )
  out.block('function escapeFailed(error) {', () => {
    out.line('if (error?.fwMalformed === true || error?.fwDenormalized === true) return false')
    out.line('throw error')
  })
  out.line()
  out.line(
    '/** A miss settled without the any-method walk: 404, unless an escape may make it a hit (see match). */',
  )
  out.block('function settled(path) {', () =>
    out.line("return path.indexOf('%') === -1 ? NOT_FOUND : null"),
  )
  out.line()
  emitMiss(out)
}

function emitMiss(out: CodeWriter): void {
  out.line(
    '/** 404 unless some method matches the path (one walk); then the exact 405 allow list. */',
  )
  out.block('function miss(path, host) {', () => {
    out.block(
      'try {',
      () => out.line('if (ANY(path, host) === null) return NOT_FOUND'),
      '} catch (error) {',
    )
    out.line('  escapeFailed(error)')
    out.line('}')
    out.line('const allow = []')
    out.block('for (const [method, find] of ALLOWABLE) {', () => {
      out.block(
        'try {',
        () => {
          out.line('const r = find(path, host)')
          out.line('if (r !== null && r !== NOT_FOUND) allow.push(method)')
        },
        '} catch (error) {',
      )
      out.line('  if (!escapeFailed(error)) allow.push(method)')
      out.line('}')
    })
    out.line('return allow.length === 0 ? NOT_FOUND : { status: 405, allow }')
  })
  out.line()
}

/** The body of match()'s try: the switch calling the method's function. */
function emitMethodSwitch(out: CodeWriter, methods: HttpMethod[]): void {
  out.line('let r = null')
  out.block('switch (method) {', () => {
    for (const m of methods) out.line(`case ${lit(m)}: r = ${m}(path, host); break`)
  })
  out.line('if (r !== null) return r')
}

function emitMatchEntry(out: CodeWriter, methods: HttpMethod[], hasHosts: boolean): void {
  out.line('/**')
  out.line(
    ' * Finds the route for a request. `path` is the URL path without its query string; `host` the',
  )
  out.line(
    ' * Host header (only consulted by domain routes). Returns { route, params }, or { status: 404 },',
  )
  out.line(' * { status: 405, allow }, or { status: 400 } for a malformed %-escape in a parameter.')
  out.line(
    ' * Equivalent URLs (RFC 3986 6.2.2: `/users/%34%32` and `/users/42`) match the same route.',
  )
  out.line(' * This is the hot path: change with care and run `npm run bench`.')
  out.line(' */')
  out.block('export function match(method, path, host) {', () => {
    out.line('if (path.charCodeAt(0) !== 47) return NOT_FOUND')
    out.line(
      'if (path.length > 1 && path.charCodeAt(path.length - 1) === 47) path = path.slice(0, -1)',
    )
    out.line(
      hasHosts
        ? "host = host === undefined || host === null ? '' : normalizeHost(host)"
        : '// no domain routes: host is not consulted',
    )
    // The cold paths are functions of their own: the less code here, the more V8 inlines.
    out.block('try {', () => emitMethodSwitch(out, methods), '} catch (error) {')
    out.line('  return failed(error, method, path, host)')
    out.line('}')
    out.line('return unmatched(method, path, host)')
  })
  out.line()
}

/** match()'s cold paths: failed(), unmatched() and matchNormal(), the normal-form retry. */
function emitRetries(out: CodeWriter, methods: HttpMethod[]): void {
  out.line('/** A walk threw: match the normal form, or 400 for a malformed escape. */')
  out.block('function failed(error, method, path, host) {', () => {
    out.line(
      'if (error?.fwDenormalized === true) return matchNormal(method, normalizePath(path), host)',
    )
    out.line('if (error?.fwMalformed === true) return BAD_REQUEST')
    out.line('throw error')
  })
  out.line()
  out.line(
    '/** No hit as sent: an equivalent spelling (%41 for A, %c3 for %C3) may match; else 404/405. */',
  )
  out.block('function unmatched(method, path, host) {', () => {
    out.block("if (path.indexOf('%') !== -1) {", () => {
      out.line('const normal = normalizePath(path)')
      out.line('if (normal !== path) return matchNormal(method, normal, host)')
    })
    out.line('return miss(path, host)')
  })
  out.line()
  emitMatchNormal(out, methods)
}

function emitMatchNormal(out: CodeWriter, methods: HttpMethod[]): void {
  out.line('/** match() of a path in normal form (as normalizePath() gives it). */')
  out.block('function matchNormal(method, path, host) {', () => {
    out.block('try {', () => emitMethodSwitch(out, methods), '} catch (error) {')
    // A parameter holding a malformed escape (`%4%32` stays as sent) is a 400; so is one that
    // normalizePath() would still rewrite once cut from its path (the escape's context differs).
    out.line(
      '  if (error?.fwMalformed === true || error?.fwDenormalized === true) return BAD_REQUEST',
    )
    out.line('  throw error')
    out.line('}')
    out.line('return miss(path, host)')
  })
  out.line()
}

function emitUrlFor(out: CodeWriter): void {
  out.line('/** Builds the URL of a named route: urlFor(name, params?, query?, absolute?). */')
  out.block('export function urlFor(name, params = {}, query = {}, absolute = false) {', () => {
    out.line("NAMES ??= part('./__names.mjs').NAMES")
    out.line('return buildUrl(NAMES, name, params, query, absolute)')
  })
}

/**
 * urlFor() of a route set with constraints that look around their segment (`{x:(?<=/)ab}`):
 * those are tested on the path built, in the normal form match() tests, from the segment's start.
 */
function emitCheckedUrlFor(out: CodeWriter): void {
  out.line('let IN_PLACE = null')
  out.line('/** Builds the URL of a named route: urlFor(name, params?, query?, absolute?). */')
  out.block('export function urlFor(name, params = {}, query = {}, absolute = false) {', () => {
    out.line("if (NAMES === null) ({ NAMES, IN_PLACE } = part('./__names.mjs'))")
    out.line('const url = buildUrl(NAMES, name, params, query, absolute)')
    out.line('const checks = IN_PLACE[name]')
    out.line('if (checks === undefined) return url')
    out.line('const problem = inPlaceProblem(name, checks, buildUrl(NAMES, name, params))')
    out.line('if (problem === null) return url')
    out.line(
      "// A value the constraint refuses as encodeURIComponent spells it, in a path's other spellings",
    )
    out.line(
      "// ('@' as is, or '!' escaped): match() tells them apart (see spell() in __helpers.mjs).",
    )
    out.block('for (let form = 1; form < SPELLINGS; form++) {', () => {
      out.line('const built = buildUrl(NAMES, name, params, undefined, false, form)')
      out.line(
        'if (inPlaceProblem(name, checks, built) === null) return buildUrl(NAMES, name, params, query, absolute, form)',
      )
    })
    out.line('throw problem')
  })
  out.line()
  emitInPlaceProblem(out)
}

function emitInPlaceProblem(out: CodeWriter): void {
  out.line(
    '/** The error unless each in-place constraint matches its segment of `built`, as match() tests it. */',
  )
  out.block('function inPlaceProblem(name, checks, built) {', () => {
    out.line(
      '// As match() sees it: in normal form, without a trailing slash (an empty catch-all).',
    )
    out.line('let path = normalizePath(built)')
    out.line("if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1)")
    out.line("const segments = path.split('/')")
    out.block('for (const [index, param, whole, beforeSlash, source] of checks) {', () => {
      out.line('// An absent optional parameter: nothing to test.')
      out.line('if (index >= segments.length) continue')
      out.line("const a = segments.slice(0, index).join('/').length + 1")
      out.line('const b = a + segments[index].length')
      out.line('const last = beforeSlash === null || b === path.length')
      out.line(
        'if (last ? sticky(whole, path, a, b) : sticky(beforeSlash, path.slice(0, b + 1), a, b)) continue',
      )
      out.line('const problem = `${JSON.stringify(segments[index])} does not match ${source}`')
      out.line(
        'return new UrlGenerationError(\'FW_URL_PARAM\', `urlFor("${name}"): parameter "${param}" ${problem}`)',
      )
    })
    out.line('return null')
  })
}
