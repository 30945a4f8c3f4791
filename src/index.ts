/**
 * fw: what a routes file and an application import. The compiler lives in `fw/compiler` and is
 * never loaded by a production server.
 */
export { Registrar, Route, defineRoutes, collectRoutes, defineConfig } from './define/index.js'
export type {
  RouteOptions,
  GroupOptions,
  GroupCallback,
  NameOrOptions,
  Handler,
  MiddlewareInput,
  AliasTarget,
  SynchronousRegistration,
  FwConfig,
  ConfigValue,
} from './define/index.js'
export { FwError, ERROR_CODES } from './shared/errors.js'
export type { ErrorCode, SourceLocation } from './shared/errors.js'
export type { HandlerRef, MiddlewareRef, RouteRecord } from './shared/route-record.js'
export { HTTP_METHODS, type HttpMethod } from './shared/methods.js'
export * from './runtime/index.js'
