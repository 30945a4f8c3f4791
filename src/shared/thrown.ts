/**
 * Reading whatever was thrown, for an error message. A routes or config file can throw anything:
 * `throw null`, an object without a prototype (no toString), an Error whose `message` getter
 * throws or whose `stack` is not a string. Read naively, those threw again inside fw's error
 * printing, and the user got fw's own TypeError and "looks like a bug in fw", or Node's raw stack.
 */

/**
 * The message of a thrown value; never throws.
 * @example
 * thrownMessage(new Error('boom')) // 'boom'
 * thrownMessage(Object.create(null)) // '[object Object]'
 */
export function thrownMessage(value: unknown): string {
  try {
    if (value instanceof Error) return String(value.message)
    return String(value)
  } catch {
    try {
      return Object.prototype.toString.call(value)
    } catch {
      return 'a value that cannot be shown'
    }
  }
}

/**
 * The stack of a thrown Error, '' when there is none that is a string; never throws.
 * @example
 * thrownStack(new Error('boom')) // 'Error: boom\n    at ...'
 */
export function thrownStack(value: unknown): string {
  try {
    return value instanceof Error && typeof value.stack === 'string' ? value.stack : ''
  } catch {
    return ''
  }
}
