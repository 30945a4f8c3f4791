// bench/RESULTS.md holds the router results and, each between two marker comments of its own,
// the HTTP and the throttle results. Each benchmark rewrites only its own part: the router
// writer keeps every marked section it finds, a section writer replaces its section in place
// (or appends it), keeping everything else.

import { readFile, writeFile } from 'node:fs/promises'

export const SECTIONS = ['http', 'instructions', 'throttle']

const markers = (id) => ({ start: `<!-- ${id}-bench:start -->`, end: `<!-- ${id}-bench:end -->` })

async function readOr(file, fallback) {
  try {
    return await readFile(file, 'utf8')
  } catch {
    return fallback
  }
}

// The section `id` of `text` (markers included), or ''.
export function markedSection(text, id) {
  const { start, end } = markers(id)
  const from = text.indexOf(start)
  const to = text.indexOf(end, from)
  return from === -1 || to === -1 ? '' : text.slice(from, to + end.length)
}

// The HTTP section of `text` (markers included), or ''.
export const httpSection = (text) => markedSection(text, 'http')

// Every marked section of `text`, in the order they appear.
function markedSections(text) {
  return SECTIONS.map((id) => ({
    id,
    at: text.indexOf(markers(id).start),
    section: markedSection(text, id),
  }))
    .filter((s) => s.section)
    .sort((a, b) => a.at - b.at)
    .map((s) => s.section)
}

// Writes the router results, keeping the marked sections already in the file.
export async function writeRouterResults(file, markdown) {
  const kept = markedSections(await readOr(file, ''))
  await writeFile(file, [markdown.trimEnd(), ...kept].join('\n\n') + '\n')
}

// Writes `markdown` into the file's section `id` (in place, else appended), keeping the rest.
export async function writeSection(file, id, markdown) {
  const { start, end } = markers(id)
  const text = await readOr(file, '')
  const section = `${start}\n${markdown.trim()}\n${end}`
  const old = markedSection(text, id)
  if (old)
    return writeFile(
      file,
      text.replace(old, () => section),
    )
  await writeFile(file, text.trim() ? `${text.trimEnd()}\n\n${section}\n` : `${section}\n`)
}

// Writes the HTTP results into the file's HTTP section, keeping everything else.
export const writeHttpResults = (file, markdown) => writeSection(file, 'http', markdown)

// Writes the throttle results into the file's throttle section, keeping everything else.
export const writeThrottleResults = (file, markdown) => writeSection(file, 'throttle', markdown)
