/** `fw user:create`, parsed in-process: stdin and hidden-prompt passwords, clear errors. */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough, Readable } from 'node:stream'
import BetterSqlite3 from 'better-sqlite3'
import { Command } from 'commander'
import { afterAll, describe, expect, it } from 'vitest'
import { openDatabase } from '../../src/auth/stores/open.js'
import { verifyPassword } from '../../src/auth/password.js'
import { registerUserCreateCommand, type PasswordIo } from '../../src/cli/commands/user-create.js'
import { FwError } from '../../src/shared/errors.js'

const dir = mkdtempSync(join(tmpdir(), 'fw-user-create-'))
const database = `sqlite:${join(dir, 'app.db')}`
afterAll(() => rmSync(dir, { recursive: true, force: true }))

interface Run {
  out: string[]
  prompts: string[]
  error: unknown
}

async function runCommand(args: string[], stdin: PasswordIo['stdin']): Promise<Run> {
  const result: Run = { out: [], prompts: [], error: null }
  const program = new Command('fw')
    .exitOverride()
    .configureOutput({ writeOut: () => {}, writeErr: () => {} })
  registerUserCreateCommand(program, { out: (t) => result.out.push(t), err: () => {} }, () => ({
    stdin,
    prompt: (t) => result.prompts.push(t),
  }))
  try {
    await program.parseAsync(['user:create', ...args, '--database', database], { from: 'user' })
  } catch (error) {
    result.error = error
  }
  return result
}

const piped = (text: string): Readable => Readable.from([Buffer.from(text)])

/** A fake terminal: raw mode recorded, keystrokes typed after the prompt appears. */
function terminal(keystrokes: string[]): PasswordIo['stdin'] & { raw: boolean[] } {
  const stream = new PassThrough() as PassThrough & {
    isTTY: boolean
    setRawMode: (raw: boolean) => void
    raw: boolean[]
  }
  stream.isTTY = true
  stream.raw = []
  stream.setRawMode = (raw) => {
    stream.raw.push(raw)
    if (raw) setImmediate(() => stream.write(keystrokes.shift() ?? '\u0004'))
  }
  return stream
}

const find = async (email: string) => {
  const db = await openDatabase(database)
  try {
    return await db.users.findByEmail(email)
  } finally {
    await db.close()
  }
}

describe('fw user:create', () => {
  it('creates a user from --password-stdin, hashed with argon2id, with roles', async () => {
    const run = await runCommand(
      [
        '--email',
        'Ada@Example.com',
        '--name',
        'Ada',
        '--roles',
        'admin, editor',
        '--password-stdin',
      ],
      piped('correct horse\n'),
    )
    expect(run.error).toBeNull()
    expect(run.out[0]).toMatch(/^created user \d+ ada@example\.com \(roles: admin, editor\)$/)
    const user = await find('ada@example.com')
    expect(user).toMatchObject({ name: 'Ada', roles: ['admin', 'editor'] })
    expect(user!.password_hash).toMatch(/^\$argon2id\$/)
    expect(await verifyPassword('correct horse', user!.password_hash)).toBe(true)
  })

  it('prompts twice without echo on a terminal', async () => {
    const stdin = terminal(['battery staple\r', 'battery staple\r'])
    const run = await runCommand(['--email', 'bob@example.com', '--name', 'Bob'], stdin)
    expect(run.error).toBeNull()
    expect(run.prompts.join('')).toBe('Password: \nRepeat password: \n')
    expect(run.prompts.join('')).not.toContain('battery')
    expect(stdin.raw).toEqual([true, false, true, false])
    expect(
      await verifyPassword('battery staple', (await find('bob@example.com'))!.password_hash),
    ).toBe(true)
  })

  const failures: [string, string[], () => PasswordIo['stdin'], string, RegExp][] = [
    [
      'a name holding a control character (an ANSI escape would restyle every listing of it)',
      ['--email', 'c@example.com', '--name', 'C\u001b[31m', '--password-stdin'],
      () => piped('correct horse'),
      'FW_USER_INVALID',
      /The name holds a control character/,
    ],
    [
      'an email holding a control character',
      ['--email', 'c\u0007@example.com', '--name', 'C', '--password-stdin'],
      () => piped('correct horse'),
      'FW_USER_INVALID',
      /is not an email address/,
    ],
    [
      'a duplicate email',
      ['--email', 'ADA@example.com', '--name', 'Again', '--password-stdin'],
      () => piped('correct horse'),
      'FW_USER_EXISTS',
      /already exists/,
    ],
    [
      'an empty password',
      ['--email', 'c@example.com', '--name', 'C', '--password-stdin'],
      () => piped('\n'),
      'FW_PASSWORD_WEAK',
      /empty/,
    ],
    [
      'a short password',
      ['--email', 'c@example.com', '--name', 'C', '--password-stdin'],
      () => piped('abc'),
      'FW_PASSWORD_WEAK',
      /too short/,
    ],
    [
      'no password and no terminal',
      ['--email', 'c@example.com', '--name', 'C'],
      () => piped(''),
      'FW_PASSWORD_MISSING',
      /not a terminal/,
    ],
    [
      'passwords that differ',
      ['--email', 'c@example.com', '--name', 'C'],
      () => terminal(['one password\r', 'another one\r']),
      'FW_PASSWORD_MISSING',
      /do not match/,
    ],
    [
      'Ctrl-C at the prompt',
      ['--email', 'c@example.com', '--name', 'C'],
      () => terminal(['\u0003']),
      'FW_PASSWORD_MISSING',
      /Cancelled/,
    ],
    [
      'a malformed email',
      ['--email', 'not-an-email', '--name', 'C', '--password-stdin'],
      () => piped('correct horse'),
      'FW_USER_INVALID',
      /not an email/,
    ],
    [
      'a malformed role',
      ['--email', 'c@example.com', '--name', 'C', '--roles', 'ad min', '--password-stdin'],
      () => piped('correct horse'),
      'FW_USER_INVALID',
      /not a role/,
    ],
  ]

  it.each(failures)('fails clearly on %s', async (_what, args, stdin, code, message) => {
    const run = await runCommand(args, stdin())
    expect(run.error).toBeInstanceOf(FwError)
    expect((run.error as FwError).code).toBe(code)
    expect((run.error as FwError).message).toMatch(message)
    expect((run.error as FwError).hint).toEqual(expect.any(String))
    expect(await find('c@example.com')).toBeNull()
  })

  // The store waits 5 s (from timers) for a write lock another process holds, then gives up.
  it('reports a write lock that outlasts the wait as one clear error, not a bug', async () => {
    const holder = new BetterSqlite3(join(dir, 'app.db'))
    holder.exec('BEGIN IMMEDIATE')
    let run: Run
    try {
      run = await runCommand(
        ['--email', 'locked@example.com', '--name', 'Lock', '--password-stdin'],
        piped('correct horse\n'),
      )
    } finally {
      holder.exec('COMMIT')
      holder.close()
    }
    expect(run.error).toBeInstanceOf(FwError)
    expect(run.error).toMatchObject({
      code: 'FW_DATABASE_UNAVAILABLE',
      message: 'The user store is locked by another process: database is locked',
    })
    expect(await find('locked@example.com')).toBeNull()
  }, 20_000)

  it('requires --email and --name', async () => {
    const run = await runCommand(['--name', 'X', '--password-stdin'], piped('correct horse'))
    expect(String(run.error)).toMatch(/--email/)
  })
})

describe('fw user:create with details that are refused', () => {
  it('reports them without opening the password input', async () => {
    let opened = 0
    const program = new Command('fw')
      .exitOverride()
      .configureOutput({ writeOut: () => {}, writeErr: () => {} })
    registerUserCreateCommand(program, { out: () => {}, err: () => {} }, () => {
      opened++
      throw new Error('the password input was opened')
    })
    const error = await program
      .parseAsync(['user:create', '--email', 'not-an-email', '--name', 'Ada'], { from: 'user' })
      .catch((caught: unknown) => caught)
    expect(opened).toBe(0)
    expect((error as FwError).code).toBe('FW_USER_INVALID')
  })
})

describe('fw user:create --roles that names none', () => {
  it('is refused, and no user is created', async () => {
    for (const roles of [',,', '', ' , ']) {
      const email = `roles${roles.length}@example.com`
      const run = await runCommand(
        ['--email', email, '--name', 'Ada', '--roles', roles, '--password-stdin'],
        piped('correct horse battery'),
      )
      expect((run.error as FwError).code).toBe('FW_USER_INVALID')
      expect((run.error as FwError).message).toBe('--roles names no role')
      expect(await find(email)).toBeNull()
    }
  })
})
