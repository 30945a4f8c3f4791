/**
 * Only exactly `{{{ key }}}` is raw in a view: a mistyped one (`{{{ key }}`, `{{ key }}}`) is
 * escaped, never raw. The closing brace used to be optional, so `{{{ b }}` rendered `b` unescaped.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { view } from '../../../src/runtime/response.js'
import { TemplateViews } from '../../../src/runtime/views.js'
import { bootKernel, cleanupTempDirs, serve } from './support.js'

afterAll(cleanupTempDirs)

const data = { a: '<b>', b: '<i>' }

describe('raw view placeholders', () => {
  it('escapes a mistyped raw placeholder, over HTTP', async () => {
    const views = new TemplateViews({
      templates: { page: 'A={{ a }} B={{{ b }} C={{{ a }}} D={{ b }}} E={{{b}}}' },
    })
    const served = await serve(
      await bootKernel((r) => r.get('/', () => view('page', data)), { views }),
    )
    try {
      const reply = await served.send('GET', '/')
      expect(reply.headers['content-type']).toBe('text/html; charset=utf-8')
      expect(reply.text).toBe('A=&lt;b&gt; B={&lt;i&gt; C=<b> D=&lt;i&gt;} E=<i>')
    } finally {
      await served.close()
    }
  })

  it('never renders a value raw unless its placeholder has three braces on each side', () => {
    const views = new TemplateViews({
      templates: {
        t1: '{{{ b }}',
        t2: '{{ b }}}',
        t3: '{{{{ b }}}}',
        t4: '{{{ b } }}',
      },
    })
    expect(views.render('t1', data)).toBe('{&lt;i&gt;')
    expect(views.render('t2', data)).toBe('&lt;i&gt;}')
    expect(views.render('t3', data)).toBe('{<i>}')
    expect(views.render('t4', data)).toBe('{{{ b } }}')
  })
})
