/**
 * Password hashing and verification. New hashes are argon2id (@node-rs/argon2, hashed off the main
 * thread); stored bcrypt hashes (`$2a$`, `$2b$` and PHP's `$2y$`) and argon2id/argon2i hashes
 * verify, so users migrated from PHP apps keep working. Verification never throws: a malformed or
 * unsupported stored hash, or one whose cost parameters exceed the caps below, is a mismatch.
 *
 * Passwords are prepared as RFC 8265's OpaqueString before hashing and verifying (NIST SP
 * 800-63B 5.1.1.2): non-ASCII spaces become U+0020 and the result is NFC-normalised. "é" typed on
 * one keyboard is U+00E9, on another (macOS input, some mobile keyboards) "e" + U+0301; a space is
 * U+0020 on one and U+00A0 on another (macOS types it with Option+Space, and pasting from a web
 * page or a word processor gives it): each pair must open the account.
 */
import * as argon2 from '@node-rs/argon2'
import * as bcrypt from '@node-rs/bcrypt'
import { closestName } from '../shared/option-names.js'

/** Longer passwords are refused before any hashing (the work is linear in the length). */
export const MAX_PASSWORD_BYTES = 1024
/** bcrypt reads only the first 72 bytes; new bcrypt hashes refuse longer passwords. */
export const BCRYPT_MAX_BYTES = 72
export const MIN_PASSWORD_LENGTH = 8

/** Caps on the cost read from a stored hash: above them verification is refused, not run. */
export const COST_CAPS = {
  bcryptCost: 14,
  argon2MemoryKiB: 131_072,
  argon2TimeCost: 16,
  argon2Parallelism: 16,
} as const

/** OWASP's argon2id baseline (19 MiB, 2 passes, 1 lane), the package's defaults. */
const ARGON2ID = 2 as argon2.Algorithm
const ARGON2_OPTIONS: argon2.Options = {
  algorithm: ARGON2ID,
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
}

const BCRYPT_HASH = /^\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}$/
const ARGON2_HASH =
  /^\$argon2(id|i)\$v=(16|19)\$m=\d{1,10},t=\d{1,10},p=\d{1,3}\$[A-Za-z0-9+/]{11,}\$[A-Za-z0-9+/]{16,}$/

export type HashAlgorithm = 'argon2id' | 'bcrypt'
const ALGORITHMS: readonly HashAlgorithm[] = ['argon2id', 'bcrypt']

/**
 * How a password matched: `match`, or `legacy` when only its unnormalised form did (a hash written
 * before passwords were normalised, or imported from an app that did not): rehash it then.
 */
export type PasswordCheck = 'match' | 'legacy' | 'mismatch'

/** Space separators other than U+0020 (RFC 8265 section 4.2.2: "non-ASCII space"). */
const NON_ASCII_SPACE = /(?!\u0020)\p{Zs}/gu

/** The form of a password that is hashed: RFC 8265's OpaqueString (spaces mapped, then NFC). */
export function normalizePassword(password: string): string {
  return password.replace(NON_ASCII_SPACE, ' ').normalize('NFC')
}

/**
 * Hashes a new password (argon2id unless told otherwise).
 * @example
 * const passwordHash = await hashPassword('correct horse battery staple')
 */
export async function hashPassword(
  password: string,
  algorithm: HashAlgorithm = 'argon2id',
): Promise<string> {
  // Anything but 'bcrypt' hashed with argon2id: `'bcypt'` for a legacy system's sake, silently not.
  if (!ALGORITHMS.includes(algorithm)) {
    const near = closestName(String(algorithm), ALGORITHMS)
    throw new TypeError(
      `hashPassword(): unknown algorithm \`${String(algorithm)}\` — ${near === undefined ? `use ${ALGORITHMS.join(' or ')}` : `did you mean \`${near}\`?`}`,
    )
  }
  password = normalizePassword(password)
  const bytes = Buffer.byteLength(password)
  if (bytes === 0) throw new RangeError('The password is empty')
  if (bytes > MAX_PASSWORD_BYTES)
    throw new RangeError(`The password is longer than ${MAX_PASSWORD_BYTES} bytes`)
  if (algorithm === 'bcrypt') {
    if (bytes > BCRYPT_MAX_BYTES)
      throw new RangeError(
        `bcrypt uses only ${BCRYPT_MAX_BYTES} bytes of a password; use a shorter one or argon2id`,
      )
    // @node-rs/bcrypt 1.x labels hashes $2y$ (PHP's name); $2b$ is the same algorithm, and the
    // label most other libraries expect.
    return (await bcrypt.hash(password, 12)).replace(/^\$2y\$/, '$2b$')
  }
  return argon2.hash(password, ARGON2_OPTIONS)
}

/**
 * Whether `password` matches `storedHash`. Never throws; anything malformed is false.
 * @example
 * if (!(await verifyPassword(input, user.password_hash))) throw unauthorized('Invalid credentials')
 */
export async function verifyPassword(password: unknown, storedHash: unknown): Promise<boolean> {
  return (await checkPassword(password, storedHash)) !== 'mismatch'
}

/**
 * Like verifyPassword, and tells a match of the normalised password from one of its raw form only
 * (tried after it, and only when they differ, so an ASCII password costs one verification).
 * @example
 * if ((await checkPassword(input, hash)) === 'legacy') await users.updatePasswordHash(id, await hashPassword(input))
 */
export async function checkPassword(
  password: unknown,
  storedHash: unknown,
): Promise<PasswordCheck> {
  if (typeof password !== 'string' || typeof storedHash !== 'string') return 'mismatch'
  const normalized = normalizePassword(password)
  if (await verifyExactly(normalized, storedHash)) return 'match'
  // Earlier forms: NFC only (fw before spaces were mapped), then as typed (before NFC, or imported).
  const earlier = new Set([password.normalize('NFC'), password])
  earlier.delete(normalized)
  for (const form of earlier) if (await verifyExactly(form, storedHash)) return 'legacy'
  return 'mismatch'
}

async function verifyExactly(password: string, storedHash: string): Promise<boolean> {
  try {
    if (password === '' || Buffer.byteLength(password) > MAX_PASSWORD_BYTES) return false
    if (BCRYPT_HASH.test(storedHash) && withinBcryptCaps(storedHash))
      return await bcrypt.verify(password, storedHash)
    if (ARGON2_HASH.test(storedHash) && withinArgon2Caps(storedHash))
      return await argon2.verify(storedHash, password)
    // A hash we will not verify (a disabled account's `!`, another format, costs over the caps)
    // still costs the work of a verification: answered at once, it would tell a client that the
    // account exists, as an unknown email costs a dummy verification too.
    await verifyDummy(password)
    return false
  } catch {
    return false
  }
}

let dummy: Promise<string> | null = null

/**
 * Runs a verification that always fails, costing what a real one costs, so a login for an unknown
 * email takes as long as one with a wrong password.
 * @example
 * const ok = user ? await verifyPassword(pw, user.password_hash) : await verifyDummy(pw)
 */
export async function verifyDummy(password: unknown): Promise<false> {
  dummy ??= argon2.hash('fw dummy password, never matches', ARGON2_OPTIONS)
  await verifyPassword(
    typeof password === 'string' && password !== '' ? password : 'x',
    await dummy,
  )
  return false
}

/**
 * Whether a stored hash should be replaced by a fresh argon2id one (after a successful login).
 * @example
 * if (needsRehash(user.password_hash)) await users.updatePasswordHash(user.id, await hashPassword(pw))
 */
export function needsRehash(storedHash: string): boolean {
  if (!storedHash.startsWith('$argon2id$')) return true
  try {
    const parsed = argon2.parseOptions(storedHash)
    return (
      parsed.memoryCost < ARGON2_OPTIONS.memoryCost! || parsed.timeCost < ARGON2_OPTIONS.timeCost!
    )
  } catch {
    return true
  }
}

/** A problem with a new password (for `fw user:create` and sign-up forms), or null. */
export function checkNewPassword(password: string): string | null {
  if (password.trim() === '') return 'The password is empty'
  if ([...password].length < MIN_PASSWORD_LENGTH)
    return `The password is too short; use at least ${MIN_PASSWORD_LENGTH} characters`
  if (Buffer.byteLength(password) > MAX_PASSWORD_BYTES)
    return `The password is longer than ${MAX_PASSWORD_BYTES} bytes`
  if (new Set(password).size < 3) return 'The password is too weak; use more different characters'
  return null
}

/** The cost of a `$2?$NN$...` hash (@node-rs/bcrypt 1.x has no parser for it). */
function withinBcryptCaps(storedHash: string): boolean {
  const cost = Number(storedHash.slice(4, 6))
  return Number.isInteger(cost) && cost >= 4 && cost <= COST_CAPS.bcryptCost
}

function withinArgon2Caps(storedHash: string): boolean {
  const parsed = argon2.parseOptions(storedHash)
  return (
    parsed.memoryCost >= 8 * parsed.parallelism &&
    parsed.memoryCost <= COST_CAPS.argon2MemoryKiB &&
    parsed.timeCost >= 1 &&
    parsed.timeCost <= COST_CAPS.argon2TimeCost &&
    parsed.parallelism >= 1 &&
    parsed.parallelism <= COST_CAPS.argon2Parallelism
  )
}
