/**
 * The cache folder's build lock: builds that publish into one folder at once take turns. The lock
 * is a file created with O_EXCL that holds its builder's pid, host and a random token; the holder
 * touches it while it works, and a waiting build takes over one left untouched too long or whose
 * process is gone. The token, not the inode, tells one lock from the next: a file system hands a
 * deleted file's inode to the next file created (ext4 does, every time).
 * Build time only (write-cache.ts).
 */
import { randomBytes } from 'node:crypto'
import { link, mkdir, open, readFile, rename, rm, stat, utimes } from 'node:fs/promises'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { FwError } from '../shared/errors.js'

export const LOCK_FILE = '.build.lock'
// Publishing 10k routes takes well under a second; a build waits this long for another one before
// giving up. The holder touches the lock every LOCK_HEARTBEAT_MS, so a lock untouched for
// LOCK_STALE_MS is left by a build that died, or whose event loop is stuck (one that awaits
// forever still touches it: waiting builds then give up with FW_CACHE_BUSY), and is taken over;
// so is one whose pid is gone on this host (on another host, only the age tells).
const LOCK_WAIT_MS = 60_000
const LOCK_STALE_MS = 20_000
const LOCK_HEARTBEAT_MS = 2_000
const LOCK_POLL_MS = 25
// The lock, and the name a stale one has while it is taken over (takeOver).
export const LOCK_NAME = /^\.build\.lock(\.stale-[0-9a-f]{12})?$/

interface LockHolder {
  token: string | undefined
  mtimeMs: number
  pid: number | undefined
  host: string | undefined
}

/**
 * Takes the cache folder's build lock, waiting for another build to release it (at most
 * LOCK_WAIT_MS) or taking it over when stale. Resolves to the function that releases it.
 */
export async function acquireLock(root: string): Promise<() => Promise<void>> {
  const file = join(root, LOCK_FILE)
  const deadline = Date.now() + LOCK_WAIT_MS
  for (;;) {
    const release = await tryLock(root, file)
    if (release) return release
    const holder = await readLock(file)
    if (holder === null) continue
    if (isStale(holder)) {
      await takeOver(file, holder)
    } else if (Date.now() > deadline) {
      const by = holder.pid === undefined ? 'another build' : `another build (pid ${holder.pid})`
      throw new FwError('FW_CACHE_BUSY', `${by} has been writing "${root}" for too long`, {
        hint: `Wait for it to finish or stop it; its lock (${LOCK_FILE}) is taken over once stale.`,
      })
    } else {
      await sleep(LOCK_POLL_MS + Math.random() * LOCK_POLL_MS)
    }
  }
}

/** Creates the lock file (O_EXCL: one build only), or returns null when another build holds it. */
async function tryLock(root: string, file: string): Promise<(() => Promise<void>) | null> {
  let handle
  try {
    handle = await open(file, 'wx')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT')
      await mkdir(root, { recursive: true }) // a clear removed the folder
    else if (code !== 'EEXIST') throw error
    return null
  }
  const token = randomBytes(8).toString('hex')
  try {
    const holder = { pid: process.pid, host: hostname(), at: Date.now(), token }
    await handle.writeFile(JSON.stringify(holder))
  } finally {
    await handle.close()
  }
  const heartbeat = setInterval(() => {
    const now = new Date()
    utimes(file, now, now).catch(() => {})
  }, LOCK_HEARTBEAT_MS)
  heartbeat.unref()
  return async () => {
    clearInterval(heartbeat)
    // Only our own lock: after a takeover (we hung past LOCK_STALE_MS) it is another build's.
    if ((await readLock(file).catch(() => null))?.token === token) await rm(file, { force: true })
  }
}

/** Who holds the lock, or null when it was released meanwhile. */
async function readLock(file: string): Promise<LockHolder | null> {
  let text: string
  let info: { mtimeMs: number }
  try {
    info = await stat(file)
    text = await readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw error
  }
  // Empty or partial while its holder is writing it: then only its age tells.
  let data: { pid?: unknown; host?: unknown; token?: unknown } = {}
  try {
    data = JSON.parse(text) as typeof data
  } catch {}
  return {
    token: typeof data.token === 'string' ? data.token : undefined,
    mtimeMs: info.mtimeMs,
    pid: typeof data.pid === 'number' ? data.pid : undefined,
    host: typeof data.host === 'string' ? data.host : undefined,
  }
}

function isStale(holder: LockHolder): boolean {
  if (Date.now() - holder.mtimeMs > LOCK_STALE_MS) return true
  return holder.pid !== undefined && holder.host === hostname() && !isAlive(holder.pid)
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * Removes a stale lock so that the waiting builds compete for a new one. The holder is read again
 * just before, and the file moved aside is checked after: when another waiter took the stale lock
 * over in between and a build made a fresh one, that lock (another token) is put back (link fails
 * rather than replace a lock taken meanwhile).
 */
async function takeOver(file: string, stale: LockHolder): Promise<void> {
  if ((await readLock(file))?.token !== stale.token) return
  const aside = `${file}.stale-${randomBytes(6).toString('hex')}`
  try {
    await rename(file, aside)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
    throw error
  }
  if ((await readLock(aside))?.token !== stale.token) await link(aside, file).catch(() => {})
  await rm(aside, { force: true })
}
