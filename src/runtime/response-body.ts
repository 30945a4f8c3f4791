/**
 * What a response body may be given as: a string, bytes or a Node stream as they are; a web
 * ReadableStream or an async iterable as a Node stream, stepped in the handler's async context.
 */
import { AsyncResource } from 'node:async_hooks'
import { Readable } from 'node:stream'
import type { Body } from './response.js'

/** What `create()` takes as a body: a `Body`, or a web stream or async iterable to stream. */
export type BodyInput = Body | ReadableStream | AsyncIterable<unknown>

type WebStream = Parameters<typeof Readable.fromWeb>[0]

/**
 * `value` as a response body: a web stream or an async iterable as a Node stream; anything that
 * is no body (a number, a plain object: use json()) is a TypeError naming `where`.
 */
export function toBody(value: unknown, where: string): Body {
  if (value === null || typeof value === 'string' || value instanceof Uint8Array) return value
  if (value instanceof Readable) return value
  if (value instanceof ReadableStream) return Readable.fromWeb(value as WebStream)
  if (isAsyncIterable(value)) return Readable.from(inThisContext(value))
  throw new TypeError(`${where} body must be a string, bytes or a stream, not ${describe(value)}`)
}

/**
 * `iterable` stepped in the async context it was handed over in (the handler's): a generator runs
 * as the response is written, outside every layer, where currentRequest() was the request as it
 * arrived (no route parameters, request id or middleware attributes).
 */
function inThisContext(iterable: AsyncIterable<unknown>): AsyncIterable<unknown> {
  const context = new AsyncResource('fw.body')
  return {
    [Symbol.asyncIterator]() {
      const iterator = iterable[Symbol.asyncIterator]()
      const { return: end, throw: fail } = iterator
      return {
        next: (value?: unknown) => context.runInAsyncScope(iterator.next, iterator, value),
        ...(end && { return: (value?: unknown) => context.runInAsyncScope(end, iterator, value) }),
        ...(fail && { throw: (error?: unknown) => context.runInAsyncScope(fail, iterator, error) }),
      }
    },
  }
}

/** Whether `value` is an async iterable (an async generator, say): a body to stream. */
export function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function'
  )
}

function describe(value: unknown): string {
  if (value === undefined) return 'undefined'
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`
}
