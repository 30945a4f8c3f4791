/**
 * Option names checked where options are taken (boot, a constructor), never per request: from
 * plain JavaScript a misspelt one (`requestScopeEnbled`) was ignored without a word, the option
 * silently off. Said with the nearest valid name, as fw.config.ts's keys are.
 */

/**
 * Levenshtein distance, case aside (option names are short).
 * @example
 * editDistance('rotues', 'routes') // 2
 */
export function editDistance(a: string, b: string): number {
  a = a.toLowerCase()
  b = b.toLowerCase()
  let row = [...Array(b.length + 1).keys()]
  for (let i = 0; i < a.length; i++) {
    const next = [i + 1]
    for (let j = 0; j < b.length; j++)
      next[j + 1] = Math.min(row[j + 1]! + 1, next[j]! + 1, row[j]! + Number(a[i] !== b[j]))
    row = next
  }
  return row[b.length]!
}

/**
 * The name of `known` nearest `name`, when within 2 edits (1 for a name of 4 letters or less;
 * case aside), else undefined.
 * @example
 * closestName('errorRender', ['errorRenderer', 'views']) // 'errorRenderer'
 */
export function closestName(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined
  // A short name is within 2 edits of too much: `port` of `cors`. One edit for 4 letters or less.
  let least = name.length <= 4 ? 2 : 3
  for (const candidate of known) {
    const distance = editDistance(name, candidate)
    if (distance < least) [best, least] = [candidate, distance]
  }
  return best
}

/**
 * The option names of `T`, for checkOptions: the object lists each exactly once, the type
 * refusing a missing or an extra one, so the list cannot drift from the options type.
 * @example
 * const VIEWS_OPTIONS = optionNames<TemplateViewsOptions>({ dir: 1, templates: 1, cache: 1 })
 */
export function optionNames<T>(names: Record<keyof T, 1>): readonly string[] {
  return Object.keys(names)
}

/**
 * Refuses the first key of `options` that `known` does not list, naming the nearest valid one
 * (else all of them) in a TypeError, or in the error `fail` makes of the message. Keys whose value
 * is undefined count too: the misspelling is the same. Not an object: nothing to check here.
 * @example
 * checkOptions('new TemplateViews()', { dri: 'views' }, ['dir', 'templates', 'cache'])
 * // TypeError: new TemplateViews(): unknown option `dri` — did you mean `dir`?
 */
export function checkOptions(
  where: string,
  options: unknown,
  known: readonly string[],
  fail = (message: string): Error => new TypeError(message),
): void {
  if (typeof options !== 'object' || options === null) return
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue
    const near = closestName(key, known)
    throw fail(
      `${where}: unknown option \`${key}\` — ${near === undefined ? `valid options: ${known.join(', ')}` : `did you mean \`${near}\`?`}`,
    )
  }
}
