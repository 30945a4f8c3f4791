/** The production runtime: loads the compiled cache. No compiler, bundler or CLI library here. */
export { loadRouter, isCacheFresh } from './load-router.js'
export type { CompiledRouter, MatchResult, RouteInfo } from './load-router.js'
