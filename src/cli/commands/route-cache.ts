/** `fw route:cache build` and `fw route:cache clear`. */
import { Argument, Option, type Command } from 'commander'
import pc from 'picocolors'
import { existsSync } from 'node:fs'
import { join, relative } from 'node:path'
import { resolvePaths } from '../config.js'
import type { BuildCacheResult } from '../../compiler/index.js'
import { isDebug, printError, type Output } from '../output.js'
import { count } from '../../shared/count.js'
import { MANIFEST_FILE } from '../../shared/cache-format.js'

export function registerRouteCacheCommands(program: Command, output: Output): void {
  program
    .command('route:cache')
    .description('build or clear the compiled route cache')
    .addArgument(new Argument('<action>', 'what to do').choices(['build', 'clear']))
    .option('--routes <file>', 'routes file (default: fw.config routes, else routes.ts)')
    .option('--cache <dir>', 'cache directory (default: fw.config cache, else .fw/cache)')
    .addOption(
      new Option('--matcher <kind>', 'matcher kind to clear')
        .choices(['sharded'])
        .default('sharded'),
    )
    .option('--watch', 'build, then rebuild whenever the routes file or its imports change')
    .action(
      async (
        action: string,
        flags: { routes?: string; cache?: string; watch?: boolean },
        command: Command,
      ) => {
        // A one-off clear, under a flag that promises to keep watching, went unnoticed.
        if (action === 'clear' && flags.watch)
          command.error("error: option '--watch' applies to `route:cache build` only")
        if (action === 'clear') return clear(flags, output)
        return flags.watch ? watchBuild(flags, output) : build(flags, output)
      },
    )
}

async function build(flags: { routes?: string; cache?: string }, output: Output): Promise<void> {
  const paths = await resolvePaths(flags)
  const { buildCache } = await import('../../compiler/index.js')
  printBuilt(
    output,
    paths.cache,
    await buildCache({ routesFile: paths.routes, cacheDir: paths.cache }),
  )
}

function printBuilt(
  output: Output,
  cache: string,
  result: BuildCacheResult,
  changed: string[] = [],
): void {
  const { manifest, written, milliseconds } = result
  const where = relative(process.cwd(), cache) || cache
  const what = `${count(manifest.routeCount, 'route')}, ${count(manifest.shards.length, 'shard')}`
  const status = written ? pc.green('✔ built') : pc.green('✔ up to date')
  const cause =
    changed.length > 0
      ? pc.dim(` (changed: ${changed.map((f) => relative(process.cwd(), f)).join(', ')})`)
      : ''
  output.out(
    `${status} ${what} in ${Math.round(milliseconds)} ms → ${pc.bold(where)} ${pc.dim(manifest.generation)}${cause}`,
  )
  if (result.warning !== undefined) output.err(pc.yellow(`warning ${result.warning}`))
}

/** Builds, then rebuilds on every change until interrupted; errors keep the last good cache. */
async function watchBuild(
  flags: { routes?: string; cache?: string },
  output: Output,
): Promise<void> {
  const paths = await resolvePaths({ ...flags, watch: true })
  // A cache folder fw refuses stays refused whatever the routes become: say so once and stop,
  // rather than watch for edits that cannot help.
  const { assertSafeDir } = await import('../../compiler/index.js')
  assertSafeDir(paths.cache)
  const { watchRoutes } = await import('../../serve/watch-routes.js')
  const debug = isDebug(process.argv)
  const watcher = watchRoutes({
    routesFile: paths.routes,
    cacheDir: paths.cache,
    onBuild: (result, changed) => printBuilt(output, paths.cache, result, changed),
    onError: (error) => {
      printError(output, error, debug)
      // Only a cache that was built can be kept: before the first good build there is none.
      const kept = existsSync(join(paths.cache, MANIFEST_FILE))
      output.err(
        pc.dim(
          `  ${kept ? 'keeping the last good cache' : 'no cache built yet'}; waiting for changes`,
        ),
      )
    },
  })
  await watcher.ready
  output.out(pc.dim(`watching ${paths.routes} and its imports (Ctrl-C to stop)`))
  await new Promise<void>((done) => {
    const stop = (): void => void watcher.close().then(done)
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
  })
}

async function clear(flags: { routes?: string; cache?: string }, output: Output): Promise<void> {
  const paths = await resolvePaths({ ...flags, routes: flags.routes ?? 'unused' })
  const { clearCache } = await import('../../compiler/clear-cache.js')
  const removed = await clearCache(paths.cache)
  const where = relative(process.cwd(), paths.cache) || paths.cache
  output.out(
    removed.length > 0
      ? `${pc.green('✔ cleared')} ${pc.bold(where)} (${removed.length} entries removed)`
      : `${pc.yellow('nothing to clear')}: no route cache in ${pc.bold(where)}`,
  )
}
