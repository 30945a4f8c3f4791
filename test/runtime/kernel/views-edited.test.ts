/**
 * The kernel's default view engine reads `views/` of the working folder. In development an
 * edited view shows at the next request (`fw serve --watch` rebuilds only when the routes
 * change, and the engine kept the first text it read); in production each view is read once.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { view } from '../../../src/runtime/response.js'
import { bootKernel, call, cleanupTempDirs, textOf } from './support.js'
import { tempDir } from '../../support/compile.js'

const cwd = process.cwd()
afterEach(() => process.chdir(cwd))
afterAll(() => cleanupTempDirs())

/** A folder holding views/page.html, made the working folder. */
function appFolder(): string {
  const dir = tempDir('fw-views-edited-')
  mkdirSync(join(dir, 'views'))
  writeFileSync(join(dir, 'views', 'page.html'), '<p>first {{ who }}</p>')
  process.chdir(dir)
  return dir
}

const routes = (r: any): void => r.get('/page', () => view('page', { who: 'Ada' }))

describe('the default view engine', () => {
  it('in development renders the view as it is now, after an edit', async () => {
    const dir = appFolder()
    const kernel = await bootKernel(routes, { env: 'development' })
    expect(await textOf(await call(kernel, 'https://app.test/page'))).toBe('<p>first Ada</p>')
    writeFileSync(join(dir, 'views', 'page.html'), '<p>edited {{ who }}</p>')
    expect(await textOf(await call(kernel, 'https://app.test/page'))).toBe('<p>edited Ada</p>')
  })

  it('in production reads each view once', async () => {
    const dir = appFolder()
    const kernel = await bootKernel(routes, { env: 'production' })
    expect(await textOf(await call(kernel, 'https://app.test/page'))).toBe('<p>first Ada</p>')
    writeFileSync(join(dir, 'views', 'page.html'), '<p>edited {{ who }}</p>')
    expect(await textOf(await call(kernel, 'https://app.test/page'))).toBe('<p>first Ada</p>')
  })
})
