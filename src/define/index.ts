export { Registrar, Route, defineRoutes, collectRoutes, joinPaths } from './registrar.js'
export type {
  RouteOptions,
  GroupOptions,
  GroupCallback,
  NameOrOptions,
  Handler,
  MiddlewareInput,
  AliasTarget,
  SynchronousRegistration,
} from './registrar.js'
export { defineConfig, type FwConfig, type ConfigValue } from './config.js'
