/**
 * Review 20: the `negotiate` middleware's retry without the ranges' parameters read a range as
 * ending at the next ';' or ',' even inside a quoted parameter value, which negotiator (its
 * parser, content-type) reads whole. So `;x="a;q=1";q=0` kept a `q=1` that is no weight and
 * selected a type the client refused with q=0, and `;note=",application/json,"` made a range of
 * a type the client never named.
 */
import { describe, expect, it } from 'vitest'
import { negotiate } from '../../src/runtime/middleware/negotiate.js'
import { FwRequest } from '../../src/runtime/request/request.js'
import { noContent } from '../../src/runtime/response.js'

async function negotiatedType(accept: string): Promise<unknown> {
  let type: unknown
  await negotiate()(FwRequest.create({ uri: '/', headers: { accept } }), async (request) => {
    type = request.getAttribute('negotiated.type')
    return noContent()
  })
  return type
}

describe('negotiate, a range with parameters', () => {
  it('never selects a type from inside a quoted parameter value', async () => {
    expect(await negotiatedType('application/json;x="a;q=1";q=0')).toBeNull()
    expect(await negotiatedType('text/csv;note=",application/json,"')).toBeNull()
    expect(await negotiatedType('text/csv;a="x\\",text/html"')).toBeNull()
  })

  it('still reads the type alone, weights kept, quoted values or not', async () => {
    expect(await negotiatedType('application/json; charset=utf-8')).toBe('application/json')
    expect(await negotiatedType('application/json; charset="utf-8"')).toBe('application/json')
    expect(await negotiatedType('text/html;level=1;q=0, text/plain;v="1,2";Q = 0.5')).toBe(
      'text/plain',
    )
    expect(await negotiatedType('text/plain;v=1;q=0, application/json;x=1;q=0')).toBeNull()
    expect(await negotiatedType('text/csv;x="a", text/html;level=1;qs=1')).toBe('text/html')
  })
})
