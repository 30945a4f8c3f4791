export { Registrar, Route, defineRoutes, collectRoutes, joinPaths } from './registrar.js'
export type {
  RouteOptions,
  GroupOptions,
  GroupCallback,
  NameOrOptions,
  Handler,
  MiddlewareInput,
} from './registrar.js'
export { defineConfig, type FwConfig } from './config.js'
