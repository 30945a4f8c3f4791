/** `fw init [DIR]`: scaffold an app from templates/init (never overwrites a file). */
import type { Command } from 'commander'
import pc from 'picocolors'
import { existsSync } from 'node:fs'
import { copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Output } from '../output.js'

const TEMPLATES = fileURLToPath(new URL('../../../templates/init', import.meta.url))
const FW_ROOT = fileURLToPath(new URL('../../..', import.meta.url)).replace(/\/$/, '')
// npm drops files named .gitignore from packages, so the template is stored without the dot.
const RENAMES: Record<string, string> = { gitignore: '.gitignore' }

export function registerInitCommand(program: Command, output: Output): void {
  program
    .command('init')
    .description('scaffold a new app: routes.ts, server.mjs, package.json')
    .argument('[dir]', 'where to create it', '.')
    .action(async (dir: string) => {
      const target = resolve(dir)
      const names = await readdir(TEMPLATES)
      const clashes = names.map((n) => RENAMES[n] ?? n).filter((n) => existsSync(join(target, n)))
      if (clashes.length > 0) {
        const { FwError } = await import('../../shared/errors.js')
        throw new FwError('FW_INIT_EXISTS', `${relative(process.cwd(), target) || '.'} already has ${clashes.join(', ')}`, {
          hint: 'fw init never overwrites files: pick an empty folder, e.g. fw init my-app.',
        })
      }
      await mkdir(target, { recursive: true })
      for (const name of names) await copyFile(join(TEMPLATES, name), join(target, RENAMES[name] ?? name))
      // fw is installed from this copy of it (the "fw" name on the npm registry is not this project).
      const manifest = join(target, 'package.json')
      const text = await readFile(manifest, 'utf8')
      await writeFile(manifest, text.replace('"fw": "*"', `"fw": ${JSON.stringify(`file:${FW_ROOT}`)}`))
      const where = relative(process.cwd(), target) || '.'
      output.out(`${pc.green('✔ created')} ${names.map((n) => RENAMES[n] ?? n).join(', ')} in ${pc.bold(where)}`)
      output.out(`next: ${where === '.' ? '' : `cd ${where} && `}npm install && npx fw serve --watch`)
    })
}
