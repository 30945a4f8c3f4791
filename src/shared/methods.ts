/** The HTTP methods a route can be registered for, in the order `Allow` headers list them. */
export const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const

export type HttpMethod = (typeof HTTP_METHODS)[number]

export function isHttpMethod(value: string): value is HttpMethod {
  return (HTTP_METHODS as readonly string[]).includes(value)
}
