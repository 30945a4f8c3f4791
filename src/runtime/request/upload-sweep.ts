/**
 * Temp files a killed process left. A request's uploads are removed once it is answered, but a
 * process killed outright (SIGKILL, the out-of-memory killer) removes nothing: an ops run left 19
 * files after 12 killed workers, and nothing ever removed them. An upload folder is swept, when a
 * process writes an upload there and at most once an hour, of fw's temp files not written to for
 * a day: no request lives that long (it has 60 s to send its body, and its files are removed once
 * it is answered). Age, not the pid in a name: a pid says nothing of a process in another
 * container sharing the folder, or of a restarted one that got the same pid.
 */
import { lstat, readdir, rm } from 'node:fs/promises'
import { join } from 'node:path'

const TEMP_FILE = /^fw-upload-[0-9a-f]{32}$/
export const STALE_MS = 24 * 60 * 60 * 1000
const EVERY_MS = 60 * 60 * 1000
const sweptAt = new Map<string, number>()

/** Sweeps `dir` unless this process did within the hour; never fails the upload that asks. */
export function sweepNow(dir: string): Promise<void> {
  const now = Date.now()
  const last = sweptAt.get(dir)
  if (last !== undefined && now - last < EVERY_MS) return Promise.resolve()
  sweptAt.set(dir, now)
  return sweep(dir, now).catch(() => {})
}

async function sweep(dir: string, now: number): Promise<void> {
  for (const name of await readdir(dir)) {
    if (!TEMP_FILE.test(name)) continue
    const file = join(dir, name)
    // Each on its own: one that is not ours to remove (another user's, in a shared /tmp), or gone
    // meanwhile, leaves the others to check.
    try {
      const info = await lstat(file)
      if (info.isFile() && now - info.mtimeMs > STALE_MS) await rm(file)
    } catch {
      // left as it is
    }
  }
}
