/**
 * Temp files a killed process left. A request's uploads are removed once it is answered, but a
 * process killed outright (SIGKILL, the out-of-memory killer, a crashed worker) removes nothing:
 * an ops run left 19 files (2.9 MB) after 12 killed workers, and nothing ever removed them. Temp
 * files are named after the process that writes them, `fw-upload-<pid>-<hex>`; the first upload a
 * process writes to a folder sweeps that folder, once, of the files of processes no longer
 * running. The upload folder is this machine's: a pid names a process of this machine.
 */
import { readdir, rm } from 'node:fs/promises'
import { join } from 'node:path'

const LEFT_BEHIND = /^fw-upload-(\d+)-[0-9a-f]{32}$/
const swept = new Set<string>()

/** Starts sweeping `dir` unless this process did already; never fails the upload that asks. */
export function sweepOnce(dir: string): void {
  if (swept.has(dir)) return
  swept.add(dir)
  sweep(dir).catch(() => {})
}

async function sweep(dir: string): Promise<void> {
  for (const name of await readdir(dir)) {
    const pid = LEFT_BEHIND.exec(name)?.[1]
    if (pid !== undefined && !isRunning(Number(pid))) await rm(join(dir, name), { force: true })
  }
}

function isRunning(pid: number): boolean {
  if (pid === process.pid) return true
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: running, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
