// bench/RESULTS.md holds the router results and, between two marker comments, the HTTP
// results. Each benchmark rewrites only its own part: the router writer keeps the HTTP
// section it finds, the HTTP writer replaces (or appends) its section.

import { readFile, writeFile } from 'node:fs/promises'

const START = '<!-- http-bench:start -->'
const END = '<!-- http-bench:end -->'

async function readOr(file, fallback) {
  try {
    return await readFile(file, 'utf8')
  } catch {
    return fallback
  }
}

// The HTTP section of `text` (markers included), or ''.
export function httpSection(text) {
  const from = text.indexOf(START)
  const to = text.indexOf(END)
  return from === -1 || to < from ? '' : text.slice(from, to + END.length)
}

const withoutHttp = (text) => {
  const section = httpSection(text)
  return section ? text.replace(section, '').trimEnd() + '\n' : text
}

// Writes the router results, keeping the HTTP section already in the file.
export async function writeRouterResults(file, markdown) {
  const kept = httpSection(await readOr(file, ''))
  await writeFile(file, kept ? `${markdown.trimEnd()}\n\n${kept}\n` : markdown)
}

// Writes the HTTP results into the file's HTTP section, keeping everything else.
export async function writeHttpResults(file, markdown) {
  const rest = withoutHttp(await readOr(file, ''))
  const section = `${START}\n${markdown.trim()}\n${END}\n`
  await writeFile(file, rest.trim() ? `${rest.trimEnd()}\n\n${section}` : section)
}
