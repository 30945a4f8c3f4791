/**
 * The "did you mean" of option names, shared by fw.config.ts's checks (CLI) and the runtime's
 * (Kernel.boot and the other options objects): the nearest name within 2 edits, case aside.
 */
import { describe, expect, it } from 'vitest'
import { checkOptions, closestName, editDistance } from '../../src/shared/option-names.js'

describe('closestName', () => {
  it('picks the nearest name, not the first one within reach', () => {
    expect(editDistance('fil', 'files')).toBe(2)
    expect(editDistance('fil', 'file')).toBe(1)
    expect(closestName('fil', ['files', 'file'])).toBe('file')
  })

  it('takes case as no difference, and suggests nothing beyond 2 edits', () => {
    expect(closestName('REQUESTSCOPEENABLED', ['requestScopeEnabled'])).toBe('requestScopeEnabled')
    expect(closestName('rotues', ['routes', 'cache'])).toBe('routes')
    expect(closestName('colour', ['matcher', 'log', 'env'])).toBeUndefined()
  })

  it('allows a name of 4 letters or less one edit only: `port` is not a misspelt `cors`', () => {
    expect(closestName('port', ['cors', 'hsts', 'env'])).toBeUndefined()
    expect(closestName('hsst', ['hsts'])).toBeUndefined()
    expect(closestName('cor', ['cors'])).toBe('cors')
    expect(closestName('role', ['roles'])).toBe('roles')
  })
})

describe('checkOptions', () => {
  it('lets known names, undefined values and a missing options object through', () => {
    expect(() => checkOptions('f()', { a: undefined, b: 1 }, ['a', 'b'])).not.toThrow()
    expect(() => checkOptions('f()', undefined, ['a'])).not.toThrow()
  })

  it('throws the error the caller makes of the message', () => {
    const fail = (message: string): Error => new RangeError(message)
    expect(() => checkOptions('f()', { bb: 1 }, ['b'], fail)).toThrow(
      new RangeError('f(): unknown option `bb` — did you mean `b`?'),
    )
  })
})
