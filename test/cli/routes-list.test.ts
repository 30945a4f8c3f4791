/** `fw routes:list`: the route table as text columns or JSON, from the real binary. */
import stringWidth from 'string-width'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, cleanupProjects, lines, makeProject, runFw } from '../support/project.js'

const ROUTES = `class UsersController {
  show() {
    return 'user'
  }
}

export function home() {
  return 'home'
}

export default (r) => {
  r.get('/', home, 'home')
  r.group({ prefix: '/api/v1', name: 'v1.', middleware: ['auth'] }, (r) => {
    r.get('/users/{id:int}', [UsersController, 'show'], { name: 'users.show', middleware: 'throttle:5,60' })
    r.post('/users', 'UsersController@store')
  })
  r.group({ domain: '{account}.example.com' }, (r) => {
    r.get('/whoami', () => 'me')
  })
}
`

const HEADER = ['METHOD', 'HOST', 'PATH', 'NAME', 'MIDDLEWARE', 'HANDLER']

/** Splits a table into rows of cells, using the header's column starts (cells may be empty). */
function parseTable(text: string): { header: string; rows: string[][]; footer: string } {
  const [header = '', ...rest] = lines(text)
  const starts = HEADER.map((h) => header.indexOf(h))
  const cells = (line: string): string[] =>
    starts.map((start, i) => line.slice(start, starts[i + 1] ?? line.length).trim())
  return { header, rows: rest.slice(0, -1).map(cells), footer: rest.at(-1) ?? '' }
}

beforeAll(assertBuilt)
afterAll(cleanupProjects)

describe('fw routes:list', () => {
  let dir: string

  beforeAll(() => {
    dir = makeProject({ 'routes.mjs': ROUTES })
  })

  it('prints a table with a row per route, group middleware first', async () => {
    const { code, stdout, stderr } = await runFw(['routes:list', '--routes', 'routes.mjs'], {
      cwd: dir,
    })
    expect(stderr).toBe('')
    expect(code).toBe(0)
    const table = parseTable(stdout)
    expect(table.header.split(/\s+/)).toEqual(HEADER)
    expect(table.rows).toEqual([
      ['GET', '*', '/', 'home', '', 'home()'],
      [
        'GET',
        '*',
        '/api/v1/users/{id:int}',
        'v1.users.show',
        'auth, throttle:5,60',
        'UsersController@show',
      ],
      ['POST', '*', '/api/v1/users', '', 'auth', 'UsersController@store'],
      ['GET', '{account}.example.com', '/whoami', '', '', 'closure'],
    ])
    expect(table.footer).toBe('4 routes')
  })

  it('prints the same routes as a JSON array with --json (absent host and name as null, as in the routes the cache exports)', async () => {
    const { code, stdout } = await runFw(['routes:list', '--routes', 'routes.mjs', '--json'], {
      cwd: dir,
    })
    expect(code).toBe(0)
    expect(JSON.parse(stdout)).toEqual([
      { method: 'GET', host: null, path: '/', name: 'home', middleware: [], handler: 'home()' },
      {
        method: 'GET',
        host: null,
        path: '/api/v1/users/{id:int}',
        name: 'v1.users.show',
        middleware: ['auth', 'throttle:5,60'],
        handler: 'UsersController@show',
      },
      {
        method: 'POST',
        host: null,
        path: '/api/v1/users',
        name: null,
        middleware: ['auth'],
        handler: 'UsersController@store',
      },
      {
        method: 'GET',
        host: '{account}.example.com',
        path: '/whoami',
        name: null,
        middleware: [],
        handler: 'closure',
      },
    ])
  })

  it('exits 1 with the error line on invalid routes and prints no table', async () => {
    const bad = makeProject({
      'routes.ts': `export default (r) => {\n  r.get('/', () => 'home')\n  r.get('/me', () => 'me', { middleware: 'auht' })\n}\n`,
    })
    const { code, stdout, stderr } = await runFw(['routes:list', '--routes', 'routes.ts'], {
      cwd: bad,
    })
    expect(code).toBe(1)
    expect(stdout).toBe('')
    expect(lines(stderr)).toEqual([
      expect.stringMatching(
        /^error routes\.ts:3:\d+: GET \/me: unknown middleware alias "auht" \[FW_MIDDLEWARE_INVALID\]$/,
      ),
      expect.stringMatching(/^ {2}hint: /),
    ])
  })

  it('aligns columns by terminal cells: wide and combining characters in names and handlers', async () => {
    const wide = makeProject({
      'routes.mjs': `export default (r) => {
  r.get('/a', 'UsersController@show', '用户.详情')
  r.get('/bb', 'Cafe\u0301Controller@show', 'cafe\u0301')
  r.get('/ccc', 'X@y', 'plain')
}
`,
    })
    const { code, stdout } = await runFw(['routes:list', '--routes', 'routes.mjs'], { cwd: wide })
    expect(code).toBe(0)
    // Every row's HANDLER starts in the same terminal column as the header's (用 is two cells).
    const [header = '', ...rows] = lines(stdout).slice(0, -1)
    const column = (line: string, text: string): number =>
      stringWidth(line.slice(0, line.indexOf(text)))
    const handlers = ['UsersController@show', 'Cafe\u0301Controller@show', 'X@y']
    expect(rows.map((row, i) => column(row, handlers[i]!))).toEqual(
      handlers.map(() => column(header, 'HANDLER')),
    )
  })

  it('counts one route as "1 route"', async () => {
    const one = makeProject({
      'routes.mjs': `export default (r) => {\n  r.get('/', () => 'home', 'home')\n}\n`,
    })
    const { code, stdout } = await runFw(['routes:list', '--routes', 'routes.mjs'], { cwd: one })
    expect(code).toBe(0)
    expect(parseTable(stdout).footer).toBe('1 route')
  })
})
