/**
 * Absolute URLs keep the path of their base. Regression: setBaseUrl('https://x.com/app/') (and
 * APP_URL=https://x.com/app) gave https://x.com/users/1, losing /app, for an app served under a
 * path; the README says absolute URLs start with APP_URL or what setBaseUrl() set.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import type { Registrar } from '../../src/define/registrar.js'
import { MANIFEST_FILE } from '../../src/shared/cache-format.js'
import { cleanupTempDirs, compileRoutes, noop } from '../support/compile.js'

afterAll(() => cleanupTempDirs())

function register(r: Registrar): void {
  r.get('/', noop, 'home')
  r.get('/users/{id:int}', noop, 'users.show')
  r.group({ domain: '{account}.example.com' }, (r) => r.get('/whoami', noop, 'whoami'))
}

interface Generation {
  urlFor(name: string, params?: object, query?: object, absolute?: boolean | string): string
  setBaseUrl(url: string): void
}

/** A freshly built router module (its own copy of the helpers, so its own base URL). */
async function build(): Promise<Generation> {
  const { dir } = await compileRoutes(register)
  const { generation } = JSON.parse(readFileSync(join(dir, MANIFEST_FILE), 'utf8')) as {
    generation: string
  }
  return (await import(pathToFileURL(join(dir, generation, 'index.mjs')).href)) as Generation
}

describe('setBaseUrl with a path', () => {
  it('keeps the base path, without a double slash', async () => {
    const m = await build()
    m.setBaseUrl('https://x.com/app/')
    expect(m.urlFor('users.show', { id: 1 }, {}, true)).toBe('https://x.com/app/users/1')
    expect(m.urlFor('users.show', { id: 1 }, { a: 'b' }, true)).toBe(
      'https://x.com/app/users/1?a=b',
    )
    expect(m.urlFor('home', {}, {}, true)).toBe('https://x.com/app/')
    m.setBaseUrl('https://x.com:8443/a/b')
    expect(m.urlFor('users.show', { id: 2 }, {}, true)).toBe('https://x.com:8443/a/b/users/2')
  })

  it('keeps it for domain routes too, with the base scheme and port', async () => {
    const m = await build()
    m.setBaseUrl('https://x.com:8443/app')
    expect(m.urlFor('whoami', { account: 'acme' }, {}, true)).toBe(
      'https://acme.example.com:8443/app/whoami',
    )
  })

  it('still gives relative URLs without it', async () => {
    const m = await build()
    m.setBaseUrl('https://x.com/app/')
    expect(m.urlFor('users.show', { id: 1 })).toBe('/users/1')
  })

  it('adds nothing for a base without a path', async () => {
    const m = await build()
    m.setBaseUrl('https://x.com/')
    expect(m.urlFor('users.show', { id: 1 }, {}, true)).toBe('https://x.com/users/1')
  })
})

describe('APP_URL with a path', () => {
  const saved = process.env.APP_URL
  afterAll(() => {
    if (saved === undefined) delete process.env.APP_URL
    else process.env.APP_URL = saved
  })

  it('keeps the base path, without a double slash', async () => {
    process.env.APP_URL = 'https://x.com/app/'
    const m = await build()
    expect(m.urlFor('users.show', { id: 1 }, {}, true)).toBe('https://x.com/app/users/1')
  })

  it('keeps a path without a trailing slash alike', async () => {
    process.env.APP_URL = 'https://x.com/app'
    const m = await build()
    expect(m.urlFor('users.show', { id: 1 }, {}, true)).toBe('https://x.com/app/users/1')
  })
})
