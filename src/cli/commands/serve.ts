/** `fw serve`: run the app (see src/serve/serve.ts). */
import type { Command } from 'commander'
import pc from 'picocolors'
import { applyConfigEnv, configKeyLocation, readConfig, resolvePaths } from '../config.js'
import { configFileThatSet, configVariableLocation } from '../../shared/config-markers.js'
import { FwError } from '../../shared/errors.js'
import { redactUrl } from '../../shared/redact-url.js'
import { isDebug, printError, type Output } from '../output.js'
import { shellQuote } from './init.js'

interface ServeFlags {
  routes?: string
  cache?: string
  port?: string
  host: string
  watch?: boolean
  workers: string
  accessLog?: boolean
}

export function registerServeCommand(program: Command, output: Output): void {
  program
    .command('serve')
    .description('serve the app: builds the route cache when needed')
    .option('--routes <file>', 'routes file (default: fw.config routes, else routes.ts)')
    .option('--cache <dir>', 'cache directory (default: fw.config cache, else .fw/cache)')
    .option('--port <port>', 'port (default: PORT from the environment, else 3000)')
    .option('--host <host>', 'host', '127.0.0.1')
    .option('--watch', 'rebuild and reload when the routes or their imports change')
    .option('--workers <n>', 'processes sharing the port', '1')
    .option('--access-log', 'log a line per request (default: off, or fw.config kernel.accessLog)')
    .option('--no-access-log', 'log no line per request')
    .action(async (flags: ServeFlags) => {
      // Decimal digits only: Number() would also take '0x1100', '1e3', ' 80' and '' (which is 0).
      const workers = /^\d+$/.test(flags.workers) ? Number(flags.workers) : NaN
      if (Number.isNaN(workers) || workers < 1 || workers > 64) {
        throw new FwError(
          'FW_SERVE_CONFIG',
          `--workers ${shellQuote(flags.workers)} is not a worker count`,
          { hint: 'Use a whole number from 1 to 64, in decimal.' },
        )
      }
      if (flags.host === '') {
        throw new FwError('FW_SERVE_CONFIG', '--host is empty', {
          hint: 'Use 127.0.0.1 (this machine only), 0.0.0.0 (every interface) or an address of this machine.',
        })
      }
      const config = await readConfig()
      // Before anything reads them: the kernel, the auth and throttle stores, the secret check,
      // and PORT, which the config may set too.
      applyConfigEnv(config)
      const port = portOf(flags.port)
      checkRedisUrl()
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
        accessLog: flags.accessLog,
        kernel: config.kernel ?? {},
        kernelSource: config.kernel === undefined ? undefined : configKeyLocation(config, 'kernel'),
        say: (line) => output.out(pc.green(line)),
        warn: (line) => output.err(pc.yellow(line)),
        onError: (error) => printError(output, error, debug),
      })
    })
}

/**
 * The port: --port, else PORT (from fw.config.ts or the environment; empty counts as unset), else
 * 3000. Decimal digits only; the error names where the value came from.
 */
function portOf(flag: string | undefined): number {
  const env = process.env.PORT ?? ''
  const text = flag ?? (env !== '' ? env : '3000')
  const port = /^\d{1,5}$/.test(text) ? Number(text) : NaN
  if (!Number.isNaN(port) && port <= 65535) return port
  if (flag !== undefined) {
    throw new FwError('FW_SERVE_CONFIG', `--port ${shellQuote(text)} is not a port number`, {
      hint: 'Use a whole number from 0 to 65535, in decimal (0 picks a free port).',
    })
  }
  const configFile = configFileThatSet('PORT')
  const location = configVariableLocation('PORT')
  throw new FwError(
    'FW_SERVE_CONFIG',
    `PORT=${shellQuote(text)}${configFile ? ` (from ${configFile})` : ''} is not a port number`,
    {
      ...(location === undefined ? {} : { location }),
      hint: configFile
        ? `Set PORT in ${configFile} to a whole number from 0 to 65535, in decimal, or remove it (3000).`
        : 'PORT comes from the environment: set it to a whole number from 0 to 65535, in decimal, or unset it (3000).',
    },
  )
}

/**
 * REDIS_URL as ioredis reads it (redis:// or rediss://, `//host`, `host:port`, a socket path),
 * checked before anything connects: a malformed one failed inside ioredis with "Invalid URL",
 * reported as a bug in fw, at the first throttled route's boot. Its credentials are never shown.
 */
function checkRedisUrl(): void {
  const url = process.env.REDIS_URL ?? ''
  if (url === '' || (url.startsWith('/') && !url.startsWith('//'))) return
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url)?.[1]?.toLowerCase()
  const problem =
    scheme !== undefined && scheme !== 'redis' && scheme !== 'rediss'
      ? `its scheme is ${scheme}:, not redis: or rediss:`
      : URL.canParse(scheme !== undefined ? url : `redis://${url.replace(/^\/\//, '')}`)
        ? null
        : 'it is no URL'
  if (problem === null) return
  const configFile = configFileThatSet('REDIS_URL')
  const location = configVariableLocation('REDIS_URL')
  throw new FwError(
    'FW_SERVE_CONFIG',
    `REDIS_URL ${JSON.stringify(redactUrl(url))}${configFile ? ` (from ${configFile})` : ''} is not a Redis URL: ${problem}`,
    {
      ...(location === undefined ? {} : { location }),
      hint: `Use redis://[user:password@]host:port[/db] (rediss:// for TLS), or unset it for in-memory stores${configFile ? ` (set in ${configFile})` : ''}.`,
    },
  )
}
