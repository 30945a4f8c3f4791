/**
 * When a client is gone: `onceGone` runs cleanups when a response closes or its connection does
 * (also for a response queued behind a pipelined one), and `isDestroyed` tells a response cut
 * off, over HTTP/1.1 or node:http2's compatibility API.
 */
import type { ServerResponse } from 'node:http'
import type { Socket } from 'node:net'

// What runs when a connection closes, per socket: see `onceGone`.
const onClose = new WeakMap<Socket, Set<() => void>>()

/**
 * Runs `done` once, when `res` closes or its connection does. A response queued behind a
 * pipelined one (the client sent several requests at once) never gets 'close' when the client
 * goes away before its turn: its stream, an uploaded temp file or a timer a stream keeps was
 * held until garbage collection, or for ever. One 'close' listener per socket serves them all.
 * @example
 * onceGone(res, () => body.destroy())
 */
export function onceGone(res: ServerResponse, done: () => void): void {
  const socket = res.req.socket
  if (res.closed || socket.destroyed) return done()
  let pending = onClose.get(socket)
  if (pending === undefined) {
    const waiting = new Set<() => void>()
    onClose.set(socket, (pending = waiting))
    socket.once('close', () => {
      for (const run of waiting) run()
    })
  }
  const set = pending
  let ran = false
  const run = (): void => {
    if (ran) return
    ran = true
    set.delete(run)
    res.off('close', run)
    // A queued response is not destroyed with its connection: marked so, a stream stopped now
    // is no failure to log (a client could flood the log so).
    if (!isDestroyed(res) && socket.destroyed) res.destroy()
    done()
  }
  set.add(run)
  res.once('close', run)
}

/**
 * Whether `res` is destroyed. node:http2's compatibility response has no `destroyed`: its
 * stream's says it. Read as false there, a download the client cancelled was logged as a
 * failed stream (a client could flood the log so: many cancelled streams on one connection).
 */
export function isDestroyed(res: ServerResponse): boolean {
  const destroyed = res.destroyed as boolean | undefined
  if (destroyed !== undefined) return destroyed
  return (res as { stream?: { destroyed?: boolean } }).stream?.destroyed === true
}
