// The `cookie` package (0.7) ships no types; fw calls `serialize` only, with withCookie's options
// (set-cookie.ts, which has checked them). Ambient, so nothing of it reaches the emitted
// declarations.
declare module 'cookie' {
  export function serialize(
    name: string,
    value: string,
    options?: import('./set-cookie.js').CookieOptions,
  ): string
}
