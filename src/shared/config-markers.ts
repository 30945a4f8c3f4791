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
