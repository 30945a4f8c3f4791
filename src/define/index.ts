export { Registrar, Route, defineRoutes, collectRoutes, joinPaths } from './registrar.js'
export type { RouteOptions, GroupOptions, GroupCallback, NameOrOptions } from './registrar.js'
