/** How the CLI talks: coloured one-line results, and user errors as one line plus a hint. */
import pc from 'picocolors'
import { FwError, formatLocation } from '../shared/errors.js'

export interface Output {
  out: (text: string) => void
  err: (text: string) => void
}

export const stdio: Output = {
  out: (text) => process.stdout.write(text + '\n'),
  err: (text) => process.stderr.write(text + '\n'),
}

export function isDebug(argv: readonly string[]): boolean {
  return argv.includes('--debug') || process.env.FW_DEBUG === '1'
}

/** Prints an error: `error file:line: message [CODE]` and a hint; the stack only in debug. */
export function printError(output: Output, error: unknown, debug: boolean): void {
  if (error instanceof FwError) {
    const where = formatLocation(error.location)
    output.err(
      `${pc.red('error')} ${where ? pc.bold(where) + ': ' : ''}${error.message} ${pc.dim(`[${error.code}]`)}`,
    )
    if (error.hint) output.err(`  ${pc.cyan('hint:')} ${error.hint}`)
  } else {
    const message = error instanceof Error ? error.message : String(error)
    output.err(`${pc.red('error')} ${message}`)
    output.err(
      `  ${pc.cyan('hint:')} this looks like a bug in fw; run again with --debug and report the stack`,
    )
  }
  if (debug) {
    const stack = (e: unknown): string => (e instanceof Error ? (e.stack ?? e.message) : String(e))
    output.err(pc.dim(stack(error)))
    const cause = error instanceof Error ? error.cause : undefined
    if (cause) output.err(pc.dim(`cause: ${stack(cause)}`))
  }
}
