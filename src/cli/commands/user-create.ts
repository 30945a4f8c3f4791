/**
 * `fw user:create --email E --name N [--roles a,b] [--password-stdin]`: adds a user to the
 * configured store (DATABASE_URL), the password hashed with argon2id. The password comes from
 * stdin with --password-stdin (one trailing newline dropped), else from a prompt that does not
 * echo; never from an argument, where it would land in the shell history and `ps`.
 */
import type { Command } from 'commander'
import type { Readable } from 'node:stream'
import { FwError, type ErrorCode, type SourceLocation } from '../../shared/errors.js'
import { configFileThatSet, configVariableLocation } from '../../shared/config-markers.js'
import { thrownMessage } from '../../shared/thrown.js'
import { isBusy } from '../../auth/stores/sqlite-busy.js'
import { applyConfigEnv, readConfig } from '../config.js'
import type { Output } from '../output.js'

interface UserCreateFlags {
  email: string
  name: string
  roles?: string
  passwordStdin?: boolean
  database?: string
}

/** Where the password is read from and the prompt written to (tests pass their own). */
export interface PasswordIo {
  stdin: Readable & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown }
  prompt: (text: string) => void
}

const defaultIo = (): PasswordIo => ({
  stdin: process.stdin,
  prompt: (text) => process.stderr.write(text),
})

type UserErrorCode = Extract<
  ErrorCode,
  | 'FW_USER_EXISTS'
  | 'FW_USER_INVALID'
  | 'FW_PASSWORD_WEAK'
  | 'FW_PASSWORD_MISSING'
  | 'FW_DATABASE_UNAVAILABLE'
>
function userError(
  code: UserErrorCode,
  message: string,
  hint: string,
  cause?: unknown,
  location?: SourceLocation,
): FwError {
  return new FwError(code, message, {
    hint,
    ...(cause === undefined ? {} : { cause }),
    ...(location === undefined ? {} : { location }),
  })
}

/** Longer stdin input is refused (passwords are bounded at 1024 bytes anyway). */
const MAX_STDIN_BYTES = 4096

/**
 * @example
 * registerUserCreateCommand(program, output)
 * // echo 'correct horse' | fw user:create --email ada@example.com --name Ada --roles admin --password-stdin
 */
export function registerUserCreateCommand(
  program: Command,
  output: Output,
  io: () => PasswordIo = defaultIo,
): void {
  program
    .command('user:create')
    .description('add a user to the configured user store (DATABASE_URL), password hashed')
    .requiredOption('--email <email>', 'email address (unique, case-insensitive)')
    .requiredOption('--name <name>', 'display name')
    .option('--roles <list>', 'comma-separated roles, e.g. admin,editor')
    .option('--password-stdin', 'read the password from standard input')
    .option(
      '--database <url>',
      'sqlite:PATH or postgres://... (default: DATABASE_URL from fw.config or the environment, else sqlite:.fw/app.db)',
    )
    .action((flags: UserCreateFlags) => createUser(flags, output, io))
}

type AuthModule = typeof import('../../auth/index.js')
type UserDatabase = Awaited<ReturnType<AuthModule['openDatabase']>>

/** The command itself: checks the details and the password, then adds the user. */
async function createUser(
  flags: UserCreateFlags,
  output: Output,
  io: () => PasswordIo,
): Promise<void> {
  const details = checkDetails(flags)
  // The input is opened only for details that passed.
  const password = await readPassword(flags.passwordStdin ?? false, io())
  const auth = await import('../../auth/index.js')
  const problem = auth.checkNewPassword(password)
  if (problem !== null)
    throw userError('FW_PASSWORD_WEAK', problem, 'Use a longer passphrase, e.g. four random words.')
  applyConfigEnv(await readConfig())
  const url = flags.database ?? (process.env.DATABASE_URL || auth.DEFAULT_DATABASE_URL)
  const db = await openUserStore(auth, url, databaseSource(flags), databaseLocation(flags))
  try {
    const user = await db.users.create({
      ...details,
      passwordHash: await auth.hashPassword(password),
    })
    output.out(
      `created user ${user.id} ${user.email}${user.roles.length ? ` (roles: ${user.roles.join(', ')})` : ''}`,
    )
  } catch (error) {
    if (error instanceof auth.DuplicateEmailError) {
      throw userError(
        'FW_USER_EXISTS',
        `A user with the email ${error.email} already exists`,
        'Use another email, or sign in as that user.',
      )
    }
    // The store waited 5 s for a write lock another connection holds (SQLite's SQLITE_BUSY).
    if (isBusy(error))
      throw userError(
        'FW_DATABASE_UNAVAILABLE',
        `The user store is locked by another process: ${thrownMessage(error)}`,
        'Another connection holds a write lock on the SQLite file (a long transaction, a backup): run the command again once it is done.',
        error,
      )
    throw error
  } finally {
    await db.close()
  }
}

/**
 * Where the database URL came from, for hints: the config file wins over the environment, so
 * naming only the variable would send the user to a setting that changes nothing.
 */
function databaseSource(flags: UserCreateFlags): string {
  if (flags.database !== undefined) return '--database'
  const setIn = configFileThatSet('DATABASE_URL')
  return setIn !== undefined ? `DATABASE_URL in ${setIn}` : 'DATABASE_URL'
}

/** Where the config file writes DATABASE_URL, when that is where the URL came from. */
function databaseLocation(flags: UserCreateFlags): SourceLocation | undefined {
  return flags.database === undefined ? configVariableLocation('DATABASE_URL') : undefined
}

/** The user store at `url`; a malformed URL or an unreachable database is a user error. */
async function openUserStore(
  auth: AuthModule,
  url: string,
  source: string,
  location: SourceLocation | undefined,
): Promise<UserDatabase> {
  return auth.openDatabase(url).catch((error: unknown) => {
    if (error instanceof TypeError)
      throw userError(
        'FW_USER_INVALID',
        error.message,
        `Fix ${source} (sqlite:PATH or postgres://...), or pass --database.`,
        undefined,
        location,
      )
    throw userError(
      'FW_DATABASE_UNAVAILABLE',
      `Cannot open the user store: ${thrownMessage(error)}`,
      `Check ${source} and that the database is running.`,
      error,
      location,
    )
  })
}

// C0 and C1 controls and DEL: no part of an email address or a display name.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/

function checkDetails(flags: UserCreateFlags): { email: string; name: string; roles: string[] } {
  const email = flags.email.trim()
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || CONTROL.test(email) || email.length > 254) {
    throw userError(
      'FW_USER_INVALID',
      `"${flags.email}" is not an email address`,
      'Pass --email like ada@example.com.',
    )
  }
  const name = flags.name.trim()
  if (name === '' || name.length > 200)
    throw userError(
      'FW_USER_INVALID',
      'The name is empty or longer than 200 characters',
      'Pass --name "Ada Lovelace".',
    )
  // An escape sequence stored in a name would restyle every terminal and log that shows it.
  if (CONTROL.test(name))
    throw userError(
      'FW_USER_INVALID',
      'The name holds a control character',
      'Pass --name as plain text: "Ada Lovelace".',
    )
  const roles = (flags.roles ?? '')
    .split(',')
    .map((r) => r.trim())
    .filter((r) => r !== '')
  // `--roles ,,` (or an empty $ROLES) asked for roles and named none: said, not a user without.
  if (flags.roles !== undefined && roles.length === 0)
    throw userError(
      'FW_USER_INVALID',
      '--roles names no role',
      'Name the roles, comma-separated: --roles admin,editor (or leave --roles out).',
    )
  const bad = roles.find((role) => !/^[\w.:-]+$/.test(role))
  if (bad !== undefined)
    throw userError(
      'FW_USER_INVALID',
      `"${bad}" is not a role name`,
      'Roles are letters, digits, "_", ".", ":" or "-", comma-separated: --roles admin,editor',
    )
  return { email, name, roles: [...new Set(roles)] }
}

async function readPassword(fromStdin: boolean, io: PasswordIo): Promise<string> {
  if (fromStdin) return readAll(io.stdin)
  if (!io.stdin.isTTY || !io.stdin.setRawMode) {
    throw userError(
      'FW_PASSWORD_MISSING',
      'No password: stdin is not a terminal',
      'Pipe it in with --password-stdin, e.g. `fw user:create ... --password-stdin < secret.txt`.',
    )
  }
  const password = await readHidden(io, 'Password: ')
  const again = await readHidden(io, 'Repeat password: ')
  if (password !== again)
    throw userError(
      'FW_PASSWORD_MISSING',
      'The passwords do not match',
      'Run the command again and type the same password twice.',
    )
  return password
}

/** All of stdin, without one trailing newline. */
async function readAll(stdin: Readable): Promise<string> {
  let size = 0
  const chunks: Buffer[] = []
  for await (const chunk of stdin) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk))
    size += buffer.length
    if (size > MAX_STDIN_BYTES)
      throw userError(
        'FW_PASSWORD_WEAK',
        `The password on stdin is longer than ${MAX_STDIN_BYTES} bytes`,
        'Pipe only the password.',
      )
    chunks.push(buffer)
  }
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '')
}

/** Reads one line from a raw-mode terminal without echoing it. */
function readHidden(io: PasswordIo, prompt: string): Promise<string> {
  const { stdin } = io
  io.prompt(prompt)
  stdin.setRawMode!(true)
  stdin.resume()
  return new Promise((resolve, reject) => {
    let typed = ''
    const finish = (error: FwError | null): void => {
      stdin.off('data', onData)
      stdin.setRawMode!(false)
      stdin.pause()
      io.prompt('\n')
      if (error) reject(error)
      else resolve(typed)
    }
    const onData = (chunk: Buffer | string): void => {
      for (const char of String(chunk)) {
        if (char === '\r' || char === '\n') return finish(null)
        if (char === '\u0003' || char === '\u0004')
          return finish(
            userError(
              'FW_PASSWORD_MISSING',
              'Cancelled',
              'Run the command again to create the user.',
            ),
          )
        if (char === '\u007f' || char === '\b') typed = [...typed].slice(0, -1).join('')
        else if (char >= ' ') typed += char
      }
    }
    stdin.on('data', onData)
  })
}
