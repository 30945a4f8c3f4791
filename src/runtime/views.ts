/**
 * The default view engine: `views/<name>.html` files with `{{ key }}` (HTML-escaped) and
 * `{{{ key }}}` (raw) placeholders; dotted keys reach nested data. Templates are read once.
 */
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { FwResponse } from './response.js'
import type { ViewEngine } from './types.js'
import { checkOptions, optionNames } from '../shared/option-names.js'

// `=` and a backtick too (as Handlebars does): in an unquoted attribute, `title={{ v }}`, a
// value `x onclick=alert(1)` would otherwise add an event handler attribute. A space still ends
// an unquoted value (`x hidden` adds a valueless `hidden`): templates quote attribute values.
const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '=': '&#61;',
  '`': '&#96;',
}

// Exactly `{{{ key }}}` is raw, `{{ key }}` escaped. Anything in between (`{{{ key }}`, a typo)
// is never raw: its inner `{{ key }}` is escaped and the extra brace stays as text.
const PLACEHOLDER = /\{\{\{\s*([\w.]+)\s*\}\}\}|\{\{\s*([\w.]+)\s*\}\}/g

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'=`]/g, (c) => ESCAPES[c]!)
}

/** Where TemplateViews finds its views, and whether it keeps them once read. */
export interface TemplateViewsOptions {
  dir?: string
  templates?: Record<string, string>
  cache?: boolean
}

const VIEWS_OPTIONS = optionNames<TemplateViewsOptions>({ dir: 1, templates: 1, cache: 1 })

/**
 * @example
 * new TemplateViews({ dir: 'views' }).render('hello', { name: 'Ada' })
 */
export class TemplateViews implements ViewEngine {
  readonly #dir: string
  readonly #templates = new Map<string, string>()
  readonly #cache: boolean

  /** `cache: false` reads a view's file at each render (the kernel's default in development). */
  constructor(options: TemplateViewsOptions = {}) {
    checkOptions('new TemplateViews()', options, VIEWS_OPTIONS)
    this.#dir = resolve(options.dir ?? 'views')
    this.#cache = options.cache ?? true
    for (const [name, text] of Object.entries(options.templates ?? {}))
      this.#templates.set(name, text)
  }

  render(name: string, data: Record<string, unknown>): string {
    return this.#template(name).replace(
      PLACEHOLDER,
      (_, raw: string | undefined, escaped: string | undefined) => {
        const text = textOf(lookup(data, raw ?? escaped!))
        return raw === undefined ? escapeHtml(text) : text
      },
    )
  }

  #template(name: string): string {
    if (!/^[\w-]+(\/[\w-]+)*$/.test(name)) throw new Error(`Invalid view name "${name}"`)
    let text = this.#templates.get(name)
    if (text === undefined) {
      text = readFileSync(join(this.#dir, `${name}.html`), 'utf8')
      if (this.#cache) this.#templates.set(name, text)
    }
    return text
  }
}

/**
 * What a value renders as: nothing for null, undefined or a function (its source code is no
 * content, and may hold what the page should not show), else its text; an object whose
 * conversion throws (no prototype) renders nothing rather than failing the page.
 */
function textOf(value: unknown): string {
  if (value === undefined || value === null || typeof value === 'function') return ''
  try {
    return String(value)
  } catch {
    return ''
  }
}

function lookup(data: Record<string, unknown>, key: string): unknown {
  let value: unknown = data
  for (const part of key.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, part)) return undefined
    value = (value as Record<string, unknown>)[part]
  }
  return value
}

/**
 * The HTML response of a view answer (`view(name, data, status)`), rendered by `views`; it keeps
 * the answer's status and headers.
 * @example
 * const html = await renderView(new TemplateViews(), view('hello', { name: 'Ada' }))
 */
export async function renderView(views: ViewEngine, response: FwResponse): Promise<FwResponse> {
  const { name, data } = response.view!
  const html: unknown = await views.render(name, data)
  // A custom engine that answers no text would send an empty 200 (undefined) or fail in Node.
  if (typeof html !== 'string' && !(html instanceof Uint8Array))
    throw new TypeError(
      `The view engine returned ${html === null ? 'null' : typeof html} for view "${name}", not a string`,
    )
  return new FwResponse(response.status, { ...response.headers }, html)
}
