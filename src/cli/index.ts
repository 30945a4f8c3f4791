/**
 * The fw command line. `createProgram()` builds the commander program without side effects; each
 * command lives in ./commands and imports the heavy module it drives only when it runs.
 */
import { Command, CommanderError } from 'commander'
import { readFileSync } from 'node:fs'
import { registerRouteCacheCommands } from './commands/route-cache.js'
import { registerRoutesListCommand } from './commands/routes-list.js'
import { registerServeCommand } from './commands/serve.js'
import { registerInitCommand } from './commands/init.js'
import { registerUserCreateCommand } from './commands/user-create.js'
import {
  exitWhenFlushed,
  ignoreClosedPipes,
  isDebug,
  printError,
  printStrayErrors,
  stdio,
  type Output,
} from './output.js'

const { version } = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
) as { version: string }

/**
 * Builds the program. Pass an Output to capture what it prints (tests do).
 * @example
 * await createProgram().parseAsync(['route:cache', 'build'], { from: 'user' })
 */
export function createProgram(output: Output = stdio): Command {
  const program = new Command('fw')
    .description('A TypeScript web framework whose router is compiled ahead of time.')
    .version(version)
    .option('--debug', 'print stack traces of errors')
    .showHelpAfterError('(run fw --help for usage)')
    .configureOutput({
      writeOut: (s) => output.out(s.trimEnd()),
      writeErr: (s) => output.err(s.trimEnd()),
    })
    .exitOverride()
  registerRouteCacheCommands(program, output)
  registerRoutesListCommand(program, output)
  registerServeCommand(program, output)
  registerInitCommand(program, output)
  registerUserCreateCommand(program, output)
  registerHelpCommand(program)
  return program
}

/**
 * `fw help [command]`. Commander's own printed the program's help for a command it does not know
 * (`fw help serv`), exit 1 and no word why; this one says so, as `fw serv` does.
 */
function registerHelpCommand(program: Command): void {
  program
    .helpCommand(false)
    .command('help [command...]')
    .description('display help for command')
    .action((names: string[]) => {
      // `fw help route:cache build`: the help of the command named first, as commander's did.
      const name = names[0]
      if (name === undefined || name === 'help') return program.help()
      const command = program.commands.find((c) => c.name() === name || c.aliases().includes(name))
      if (command === undefined) program.error(`error: unknown command '${name}'`)
      command!.help()
    })
}

/**
 * Runs the CLI; resolves to the exit code (0 ok, 1 user error). Run as the fw process (output is
 * stdio), a command that has finished also ends the process: see exitWhenFlushed.
 */
export async function main(argv: readonly string[], output: Output = stdio): Promise<number> {
  if (output === stdio) {
    ignoreClosedPipes()
    printStrayErrors(output, isDebug(argv))
  }
  const program = createProgram(output)
  // A server that started keeps running; every other command is done when its action returns.
  let serving = false
  program.hook('postAction', (_program, command) => {
    serving = command.name() === 'serve'
  })
  const code = await run(program, argv, output)
  if (output === stdio && !serving) exitWhenFlushed(code)
  return code
}

async function run(program: Command, argv: readonly string[], output: Output): Promise<number> {
  try {
    await program.parseAsync(argv as string[])
    return 0
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 1
    printError(output, error, isDebug(argv))
    return 1
  }
}
