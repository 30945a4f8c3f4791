import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import type { SourceLocation } from './errors.js'
import { escapeRegExp } from './pattern.js'

/**
 * Which configuration variables came from fw.config.ts (set by the CLI's applyConfigEnv), so that
 * an error about one of them sends the user to that file rather than to the environment, which
 * the file overrides. Environment variables, so that `fw serve`'s workers see them too.
 */
export const CONFIG_VARS_MARKER = 'FW_CONFIG_VARS'
export const CONFIG_FILE_MARKER = 'FW_CONFIG_FILE'

/**
 * The config file that set `name`, or undefined when it came from the environment.
 * @example
 * configFileThatSet('JWT_SECRET') // 'fw.config.ts'
 */
export function configFileThatSet(
  name: string,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (!(env[CONFIG_VARS_MARKER] ?? '').split(',').includes(name)) return undefined
  return env[CONFIG_FILE_MARKER] ?? 'fw.config.ts'
}

/**
 * Where the config file that set `name` writes it, else its line 1; undefined when it came from
 * the environment: an error about the value names that line. Written both at the top level and
 * under `env`, the one under `env` is named: that one wins.
 * @example
 * configVariableLocation('PORT') // { file: 'fw.config.ts', line: 3, column: 9 }
 */
export function configVariableLocation(
  name: string,
  env: NodeJS.ProcessEnv = process.env,
): SourceLocation | undefined {
  const file = configFileThatSet(name, env)
  return file === undefined ? undefined : locateKey(file, name, 'env')
}

/**
 * Where `key` is first written as `key:` (quoted or not, not in a comment) in `file`, or first
 * after `under: {` when that is written too; else line 1 of the file.
 */
export function locateKey(file: string, key: string, under?: string): SourceLocation {
  let lines: string[] = []
  try {
    lines = readFileSync(resolve(file), 'utf8').split('\n')
  } catch {
    // Located at line 1.
  }
  const found = keyLines(lines, key)
  // Only an object opened there: `kernel: { env: 'production' }` is no block of variables.
  const after = under === undefined ? undefined : keyLines(lines, under, '\\s*\\{')[0]
  const later = ([line, column]: [number, number]): boolean =>
    after !== undefined && (line > after[0] || (line === after[0] && column > after[1]))
  const [at, column] = found.find(later) ?? found[0] ?? [0, 1]
  return { file, line: at + 1, column }
}

/** The lines (0-based) that write `key:` (then `then`), each with the key's column (1-based). */
function keyLines(lines: string[], key: string, then = ''): [number, number][] {
  const written = new RegExp(`(^|[\\s{,])((['"]?)${escapeRegExp(key)}\\3\\s*:${then})`)
  const found: [number, number][] = []
  lines.forEach((line, at) => {
    const match = written.exec(codeOf(line))
    if (match) found.push([at, match.index + match[1]!.length + 1])
  })
  return found
}

/** `line` without its comment: from a `//` or `/*` outside quotes, or all of a `*` line. */
function codeOf(line: string): string {
  if (/^\s*\*/.test(line)) return ''
  let quote = ''
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!
    if (quote !== '') {
      if (c === '\\') i++
      else if (c === quote) quote = ''
    } else if (c === "'" || c === '"' || c === '`') quote = c
    else if (c === '/' && (line[i + 1] === '/' || line[i + 1] === '*')) return line.slice(0, i)
  }
  return line
}
