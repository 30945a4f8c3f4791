/** `fw route:cache build` and `fw route:cache clear`. */
import { Argument, Option, type Command } from 'commander'
import pc from 'picocolors'
import { relative } from 'node:path'
import { resolvePaths } from '../config.js'
import type { Output } from '../output.js'

export function registerRouteCacheCommands(program: Command, output: Output): void {
  program
    .command('route:cache')
    .description('build or clear the compiled route cache')
    .addArgument(new Argument('<action>', 'what to do').choices(['build', 'clear']))
    .option('--routes <file>', 'routes file (default: fw.config routes, else routes.ts)')
    .option('--cache <dir>', 'cache directory (default: .fw/cache)')
    .addOption(new Option('--matcher <kind>', 'matcher kind to clear').choices(['sharded']).default('sharded'))
    .action(async (action: string, flags: { routes?: string; cache?: string; matcher: string }) => {
      return action === 'build' ? build(flags, output) : clear(flags, output)
    })
}

async function build(flags: { routes?: string; cache?: string }, output: Output): Promise<void> {
  const paths = await resolvePaths(flags)
  const { buildCache } = await import('../../compiler/index.js')
  const { manifest, written, milliseconds } = await buildCache({ routesFile: paths.routes, cacheDir: paths.cache })
  const where = relative(process.cwd(), paths.cache) || paths.cache
  const what = `${manifest.routeCount} routes, ${manifest.shards.length} shards`
  const status = written ? pc.green('✔ built') : pc.green('✔ up to date')
  output.out(`${status} ${what} in ${Math.round(milliseconds)} ms → ${pc.bold(where)} ${pc.dim(manifest.generation)}`)
}

async function clear(flags: { routes?: string; cache?: string }, output: Output): Promise<void> {
  const paths = await resolvePaths({ ...flags, routes: flags.routes ?? 'unused' })
  const { clearCache } = await import('../../compiler/write-cache.js')
  const removed = await clearCache(paths.cache)
  const where = relative(process.cwd(), paths.cache) || paths.cache
  output.out(
    removed.length > 0
      ? `${pc.green('✔ cleared')} ${pc.bold(where)} (${removed.length} entries removed)`
      : `${pc.yellow('nothing to clear')}: no route cache in ${pc.bold(where)}`,
  )
}
