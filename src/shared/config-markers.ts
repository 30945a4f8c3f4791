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
 * Where the config file that set `name` writes it (its first `NAME:`, else its line 1), or
 * undefined when it came from the environment: an error about the value names that line.
 * @example
 * configVariableLocation('PORT') // { file: 'fw.config.ts', line: 3, column: 9 }
 */
export function configVariableLocation(
  name: string,
  env: NodeJS.ProcessEnv = process.env,
): SourceLocation | undefined {
  const file = configFileThatSet(name, env)
  return file === undefined ? undefined : locateKey(file, name)
}

/** Where `key` is first written as `key:` (quoted or not) in `file`, else line 1 of it. */
export function locateKey(file: string, key: string): SourceLocation {
  let lines: string[] = []
  try {
    lines = readFileSync(resolve(file), 'utf8').split('\n')
  } catch {
    // Located at line 1.
  }
  const written = new RegExp(`(^|[\\s{,])(['"]?)${escapeRegExp(key)}\\2\\s*:`)
  const at = lines.findIndex((line) => written.test(line))
  if (at === -1) return { file, line: 1, column: 1 }
  const column = lines[at]!.search(new RegExp(`['"]?${escapeRegExp(key)}`)) + 1
  return { file, line: at + 1, column }
}
