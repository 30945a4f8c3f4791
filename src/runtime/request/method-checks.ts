/**
 * The method predicates of the request (spec table, "Method"), mixed into FwRequest as the input
 * accessors are (see mixInto in input-methods.ts).
 */

/**
 * Checks of the method a request is handled as (after X-Http-Method-Override).
 * @example
 * if (request.isMethod('patch')) return update(request)
 */
export abstract class MethodChecks {
  abstract getMethod(): string

  /** Case-insensitive: `isMethod('post')` is true for a POST. */
  isMethod(method: string): boolean {
    return this.getMethod() === method.toUpperCase()
  }

  isGet(): boolean {
    return this.isMethod('GET')
  }

  isPost(): boolean {
    return this.isMethod('POST')
  }

  isPut(): boolean {
    return this.isMethod('PUT')
  }

  isPatch(): boolean {
    return this.isMethod('PATCH')
  }

  isDelete(): boolean {
    return this.isMethod('DELETE')
  }

  isHead(): boolean {
    return this.isMethod('HEAD')
  }

  isOptions(): boolean {
    return this.isMethod('OPTIONS')
  }
}
