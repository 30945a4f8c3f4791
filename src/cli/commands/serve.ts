/** `fw serve`: run the app (see src/serve/serve.ts). */
import type { Command } from 'commander'
import pc from 'picocolors'
import { applyConfigEnv, readConfig, resolvePaths } from '../config.js'
import { isDebug, printError, type Output } from '../output.js'

interface ServeFlags {
  routes?: string
  cache?: string
  port: string
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
    .option('--port <port>', 'port', process.env.PORT ?? '3000')
    .option('--host <host>', 'host', '127.0.0.1')
    .option('--watch', 'rebuild and reload when the routes or their imports change')
    .option('--workers <n>', 'processes sharing the port', '1')
    .action(async (flags: ServeFlags) => {
      const port = Number(flags.port)
      const workers = Number(flags.workers)
      const { FwError } = await import('../../shared/errors.js')
      if (!Number.isInteger(port) || port < 0 || port > 65535) {
        throw new FwError('FW_SERVE_CONFIG', `--port ${flags.port} is not a port number`, { hint: 'Use a number from 0 to 65535.' })
      }
      if (!Number.isInteger(workers) || workers < 1 || workers > 64) {
        throw new FwError('FW_SERVE_CONFIG', `--workers ${flags.workers} is not a worker count`, { hint: 'Use a whole number from 1 to 64.' })
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
