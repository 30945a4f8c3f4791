/**
 * An error renderer whose answer is a stream that fails before its first chunk (a template
 * streamed from a file that cannot be read, a proxied upstream error page). The adapter asked the
 * boundary again, which rendered the same failing stream, over and over: no answer ever came, and
 * when the stream failed in microtasks the whole process froze. The plain 500 answers instead.
 */
import { Readable } from 'node:stream'
import { afterAll, describe, expect, it } from 'vitest'
import { FwResponse } from '../../../src/runtime/response.js'
import { bootKernel, captureLogger, cleanupTempDirs, serve, type Register } from './support.js'

afterAll(cleanupTempDirs)

const routes: Register = (r) => {
  r.get('/broken', () => {
    throw new Error('the handler failed')
  })
}

/** A body that fails on the next turn of the event loop, before yielding anything. */
function failingBody(): Readable {
  return new Readable({
    read() {
      setImmediate(() => this.destroy(new Error('the error page cannot be read')))
    },
  })
}

describe('an error renderer whose streamed answer fails before its first chunk', () => {
  it('gets the plain 500 JSON, with the request id, and one log line naming it', async () => {
    let renders = 0
    const log = captureLogger()
    const kernel = await bootKernel(routes, {
      log,
      errorRenderer: (error) => (renders++, new FwResponse(error.status, {}, failingBody())),
    })
    const server = await serve(kernel)
    try {
      const answer = await server.send('GET', '/broken', { headers: { 'x-request-id': 'req-1' } })
      expect(answer.status).toBe(500)
      expect(JSON.parse(answer.text)).toEqual({
        error: 'Internal Server Error',
        code: 500,
        request_id: 'req-1',
      })
      expect(renders).toBe(2) // the handler's error, then the failed page's
      expect(log.lines.filter((l) => l.msg === 'The error answer failed too')).toHaveLength(1)
    } finally {
      await server.close()
    }
  })
})
