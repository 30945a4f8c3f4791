/**
 * The production runtime: kernel, request, responses, errors, built-in middleware and the cache
 * loader. No compiler, bundler or CLI library is reachable from here (a test walks the imports).
 */
export { Kernel, currentRequest } from './kernel.js'
export type {
  KernelOptions,
  ServiceProvider,
  ServiceProviderClass,
  MatcherKind,
  Env,
} from './kernel.js'
export type { Invoker, InvokedHandler } from './handlers.js'
export type { CorsOptions, CorsOrigin } from './middleware/cors-policy.js'
export { Container } from './container.js'
export {
  attachKernel,
  createListener,
  type ListenerOptions,
  type NodeListener,
} from './node-adapter.js'
export { answerClientError } from './wire-errors.js'
export {
  FwResponse,
  json,
  create,
  noContent,
  redirect,
  stream,
  view,
  type RedirectStatus,
} from './response.js'
export type { BodyInput } from './response-body.js'
export type { CookieOptions, ExpiredCookieOptions } from './set-cookie.js'
export {
  HttpError,
  badRequest,
  unauthorized,
  forbidden,
  notFound,
  methodNotAllowed,
  conflict,
  gone,
  payloadTooLarge,
  unsupportedMediaType,
  unprocessable,
  tooManyRequests,
  internalError,
  serviceUnavailable,
} from './http-error.js'
export type { HttpErrorOptions, HeaderMap } from './http-error.js'
export {
  ERROR_HEADERS,
  renderError,
  type ErrorRenderer,
  type ErrorContext,
} from './error-boundary.js'
export { UrlSigner, type PayloadMode, type UrlSignerOptions } from './signed-url.js'
export { urlFor, signedUrlFor, temporaryUrlFor, temporaryUrlUntil } from './app.js'
export { TemplateViews, escapeHtml, type TemplateViewsOptions } from './views.js'
export { safePath, type SafePathOptions } from './safe-path.js'
export { file, type FileOptions } from './file.js'
export { createLogger, silentLogger } from './logger.js'
export { loadRouter, isCacheFresh } from './load-router.js'
export type { CompiledRouter, MatchResult, RouteInfo } from './load-router.js'
export { FwRequest } from './request/request.js'
export type { CreateRequestInit } from './request/factory.js'
export {
  UploadedFile,
  UPLOAD_ERR_OK,
  UPLOAD_ERR_INI_SIZE,
  UPLOAD_ERR_FORM_SIZE,
  UPLOAD_ERR_PARTIAL,
  UPLOAD_ERR_NO_FILE,
  UPLOAD_ERR_NO_TMP_DIR,
  UPLOAD_ERR_CANT_WRITE,
  type UploadedFileInit,
} from './request/uploaded-file.js'
export type { FileMap } from './request/multipart.js'
export type { ParamsInit } from './request/params.js'
export type {
  Middleware,
  MiddlewareFactory,
  Next,
  Logger,
  ViewEngine,
  RequestOptions,
  BodyLimits,
  KernelServices,
  UrlParams,
  UrlQuery,
} from './types.js'
