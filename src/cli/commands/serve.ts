/** `fw serve`: run the app (see src/serve/serve.ts). */
import type { Command } from 'commander'
import pc from 'picocolors'
import { applyConfigEnv, readConfig, resolvePaths } from '../config.js'
import { isDebug, printError, type Output } from '../output.js'
import { shellQuote } from './init.js'

interface ServeFlags {
  routes?: string
  cache?: string
  port?: string
  host: string
  watch?: boolean
  workers: string
}

export function registerServeCommand(program: Command, output: Output): void {
  program
    .command('serve')
    .description('serve the app: builds the route cache when needed')
    .option('--routes <file>', 'routes file (default: fw.config routes, else routes.ts)')
    .option('--cache <dir>', 'cache directory (default: .fw/cache)')
    .option('--port <port>', 'port (default: PORT from the environment, else 3000)')
    .option('--host <host>', 'host', '127.0.0.1')
    .option('--watch', 'rebuild and reload when the routes or their imports change')
    .option('--workers <n>', 'processes sharing the port', '1')
    .action(async (flags: ServeFlags) => {
      // Decimal digits only: Number() would also take '0x1100', '1e3', ' 80' and '' (which is 0).
      // An empty PORT in the environment counts as unset.
      const fromEnv = flags.port === undefined && (process.env.PORT ?? '') !== ''
      const portText = flags.port ?? (fromEnv ? process.env.PORT! : '3000')
      const port = /^\d{1,5}$/.test(portText) ? Number(portText) : NaN
      const workers = /^\d+$/.test(flags.workers) ? Number(flags.workers) : NaN
      const { FwError } = await import('../../shared/errors.js')
      if (Number.isNaN(port) || port > 65535) {
        throw new FwError('FW_SERVE_CONFIG', `${fromEnv ? 'PORT=' : '--port '}${shellQuote(portText)} is not a port number`, {
          hint: fromEnv
            ? 'PORT comes from the environment: set it to a whole number from 0 to 65535, in decimal, or unset it (3000).'
            : 'Use a whole number from 0 to 65535, in decimal (0 picks a free port).',
        })
      }
      if (Number.isNaN(workers) || workers < 1 || workers > 64) {
        throw new FwError('FW_SERVE_CONFIG', `--workers ${shellQuote(flags.workers)} is not a worker count`, { hint: 'Use a whole number from 1 to 64, in decimal.' })
      }
      const config = await readConfig()
      // Before anything reads them: the kernel, the auth and throttle stores, the secret check.
      applyConfigEnv(config)
      const paths = await resolvePaths(flags, config)
      const { serve } = await import('../../serve/serve.js')
      const debug = isDebug(process.argv)
      await serve({
        routes: paths.routes,
        cache: paths.cache,
        port,
        host: flags.host,
        watch: flags.watch ?? false,
        workers,
        kernel: config.kernel ?? {},
        say: (line) => output.out(pc.green(line)),
        warn: (line) => output.err(pc.yellow(line)),
        onError: (error) => printError(output, error, debug),
      })
    })
}
