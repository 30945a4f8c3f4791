/**
 * Text from the app (an error's message, a path, a field a client chose) made safe for a
 * developer's terminal: printed raw, a line break forges a log line of its own, and ESC (or the
 * 8-bit CSI, U+009B) starts an escape sequence the terminal obeys (clear the screen, set the
 * title, hide the text that follows).
 */

// DEL and the C1 controls; the Unicode line and paragraph separators; and the bidi marks,
// embeddings, overrides and isolates, which reorder what is shown ("Trojan Source"): what
// JSON.stringify leaves as it is. CONTROL adds the C0 controls.
const BEYOND_C0 = '\\u007f-\\u009f\\u061c\\u200e\\u200f\\u2028-\\u202e\\u2066-\\u2069'
const CONTROL = new RegExp(`[\\u0000-\\u001f${BEYOND_C0}]`, 'g')
const JSON_CONTROL = new RegExp(`[${BEYOND_C0}]`, 'g')
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' }

/**
 * `text` with every control character written as an escape (`\n`, `\r`, `\t`, `\x1b`, `\x9b`,
 * `\u2028`), so that it prints on one line and runs no terminal escape.
 * @example
 * escapeControls('a\n\u001b[2Jb') // 'a\\n\\x1b[2Jb'
 */
export function escapeControls(text: string): string {
  return text.replace(CONTROL, (char) => NAMED[char] ?? hex(char.charCodeAt(0)))
}

/**
 * JSON text with the characters JSON.stringify leaves as they are but a terminal still obeys or
 * reorders (DEL, the C1 controls, line and paragraph separators, bidi controls) written as
 * `\uXXXX`: the same value when parsed, printable.
 * @example
 * escapeJsonControls(JSON.stringify({ name: 'a\u009b31m' })) // '{"name":"a\\u009b31m"}'
 */
export function escapeJsonControls(json: string): string {
  return json.replace(
    JSON_CONTROL,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  )
}

function hex(code: number): string {
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, '0')}`
    : `\\u${code.toString(16).padStart(4, '0')}`
}
