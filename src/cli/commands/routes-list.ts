/** `fw routes:list`: the route table as a text table or JSON. */
import type { Command } from 'commander'
import pc from 'picocolors'
import stringWidth from 'string-width'
import { resolvePaths } from '../config.js'
import type { Output } from '../output.js'
import type { RouteRow } from '../../shared/route-record.js'
import { count } from '../../shared/count.js'
import { escapeControls, escapeJsonControls } from '../../shared/escape-controls.js'

export function registerRoutesListCommand(program: Command, output: Output): void {
  program
    .command('routes:list')
    .description('list the routes: method, host, path, name, middleware, handler')
    .option('--routes <file>', 'routes file (default: fw.config routes, else routes.ts)')
    .option('--json', 'print JSON')
    .action(async (flags: { routes?: string; json?: boolean }) => {
      const paths = await resolvePaths({ ...flags, cache: 'unused' })
      const { loadRoutesFile, analyzeRoutes, withFileLocation } =
        await import('../../compiler/index.js')
      const { describeRoute } = await import('../../shared/route-record.js')
      const { registrar, file } = await whileStdoutToStderr(() => loadRoutesFile(paths.routes))
      withFileLocation(file, () => analyzeRoutes(registrar.routes, registrar.aliases))
      const rows = registrar.routes.map(describeRoute)
      output.out(flags.json ? formatJson(rows) : formatTable(rows))
    })
}

/**
 * Runs `load` with what the routes file prints to stdout (a `console.log` at import) sent to
 * stderr: stdout carries the list only, so `fw routes:list --json | jq` gets JSON alone.
 */
async function whileStdoutToStderr<T>(load: () => Promise<T>): Promise<T> {
  const write = process.stdout.write
  process.stdout.write = process.stderr.write.bind(process.stderr) as typeof write
  try {
    return await load()
  } finally {
    process.stdout.write = write
  }
}

/** The rows as JSON, every control character escaped (`\u001b`, `\u009b`): the same value, printable. */
function formatJson(rows: RouteRow[]): string {
  return escapeJsonControls(JSON.stringify(rows, null, 2))
}

function formatTable(rows: RouteRow[]): string {
  const header = ['METHOD', 'HOST', 'PATH', 'NAME', 'MIDDLEWARE', 'HANDLER']
  // Names, paths and handlers are the routes file's text: escape what would restyle the terminal.
  const cells = rows.map((r) =>
    [r.method, r.host ?? '*', r.path, r.name ?? '', r.middleware.join(', '), r.handler].map(
      escapeControls,
    ),
  )
  // Columns are measured in terminal cells, not UTF-16 units: 用户 takes 4, é as e + U+0301 one.
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => stringWidth(c[i]!))))
  const line = (c: string[]): string =>
    c
      .map((text, i) => text + ' '.repeat(widths[i]! - stringWidth(text)))
      .join('  ')
      .trimEnd()
  return [pc.bold(line(header)), ...cells.map(line), pc.dim(count(rows.length, 'route'))].join('\n')
}
