/**
 * A package of the app's own workspace (npm/pnpm/yarn workspaces link it into node_modules) is
 * often TypeScript source, `"main": "src/index.ts"`. Packages were all left as imports for Node,
 * which cannot import .ts: the build failed with "Unknown file extension .ts". One whose entry is
 * TypeScript is bundled like the app's own files; other packages stay imports.
 */
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, cleanupProjects, makeProject, runFw, writeFiles } from '../support/project.js'
import { sendTo, serveApp } from '../support/server.js'

afterAll(cleanupProjects)
beforeAll(assertBuilt)

/** A workspace: `app/` whose routes import `@acme/shared` (TypeScript) and `plain-js`. */
function workspace(): string {
  const root = makeProject({
    'shared/package.json': JSON.stringify({
      name: '@acme/shared',
      type: 'module',
      main: 'src/index.ts',
      exports: './src/index.ts',
    }),
    'shared/src/index.ts':
      "import { suffix } from './suffix'\nexport const greet = (name: string): string => `hello ${name}${suffix}`\n",
    'shared/src/suffix.ts': "export const suffix: string = '!'\n",
    'app/package.json': JSON.stringify({ name: 'app', type: 'module' }),
    'app/node_modules/plain-js/package.json': JSON.stringify({
      name: 'plain-js',
      type: 'module',
      main: 'index.js',
    }),
    'app/node_modules/plain-js/index.js': 'export const shout = (s) => s.toUpperCase()\n',
    'app/routes.ts': [
      "import { greet } from '@acme/shared'",
      "import { shout } from 'plain-js'",
      'export default (r: any) => {',
      "  r.get('/', () => ({ greet: greet('ada'), shout: shout('ok') }))",
      '}',
      '',
    ].join('\n'),
  })
  mkdirSync(join(root, 'app/node_modules/@acme'), { recursive: true })
  symlinkSync(join(root, 'shared'), join(root, 'app/node_modules/@acme/shared'), 'dir')
  return join(root, 'app')
}

describe('a TypeScript package of the workspace', () => {
  it('is bundled into the cache, while a JavaScript package stays an import', async () => {
    const app = workspace()
    const result = await runFw(['route:cache', 'build', '--cache', 'cache'], { cwd: app })
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    const manifest = JSON.parse(readFileSync(join(app, 'cache/manifest.json'), 'utf8'))
    const bundled = readFileSync(join(app, 'cache', manifest.generation, 'routes.mjs'), 'utf8')
    expect(bundled).toContain('hello ${name}${suffix}')
    expect(bundled).not.toMatch(/from ["']@acme\/shared["']/)
    expect(bundled).toMatch(/from ["']plain-js["']/)
  })

  it('serves what its code answers', async () => {
    const app = workspace()
    const served = await serveApp([], { cwd: app })
    try {
      const answer = await sendTo(served.port, 'GET', '/')
      expect(answer.status).toBe(200)
      expect(answer.json()).toEqual({ greet: 'hello ada!', shout: 'OK' })
    } finally {
      await served.stop()
    }
  })

  it('gives a new build when its code changes', async () => {
    const app = workspace()
    await runFw(['route:cache', 'build', '--cache', 'cache'], { cwd: app })
    writeFiles(join(app, '..'), { 'shared/src/suffix.ts': "export const suffix: string = '?'\n" })
    const result = await runFw(['route:cache', 'build', '--cache', 'cache'], { cwd: app })
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/built/)
    expect(result.stdout).not.toMatch(/up to date/)
  })
})
