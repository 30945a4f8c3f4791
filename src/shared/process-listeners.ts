/**
 * fw's own `uncaughtException` / `unhandledRejection` listeners (the CLI's stray-error printer,
 * `fw serve`'s crash handler) stand in for Node's default: like it, they step aside when the app
 * listens for the event itself, and let its listener decide.
 */
const OURS = new WeakSet<(...args: never[]) => unknown>()

/** Registers `listener` for `event` as one of fw's own. */
export function listenAsFw(event: ErrorEvent, listener: (error: unknown) => void): void {
  OURS.add(listener)
  if (event === 'uncaughtException') process.on(event, listener)
  else process.on(event, listener)
}

/** Whether anything but fw listens for `event`: then fw's listeners leave the error to it. */
export function appListens(event: ErrorEvent): boolean {
  const listeners: readonly ((...args: never[]) => unknown)[] =
    event === 'uncaughtException' ? process.listeners(event) : process.listeners(event)
  return listeners.some((listener) => !OURS.has(listener))
}

type ErrorEvent = 'uncaughtException' | 'unhandledRejection'
