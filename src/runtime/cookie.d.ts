// The `cookie` package (0.7) ships no types; fw calls `serialize` only, with the options below.
// Ambient, so nothing of it reaches the emitted declarations (CookieOptions are fw's own).
declare module 'cookie' {
  export function serialize(
    name: string,
    value: string,
    options?: {
      maxAge?: number | undefined
      expires?: Date | undefined
      domain?: string | undefined
      path?: string | undefined
      secure?: boolean | undefined
      httpOnly?: boolean | undefined
      sameSite?: 'lax' | 'strict' | 'none' | undefined
      partitioned?: boolean | undefined
      priority?: 'low' | 'medium' | 'high' | undefined
    },
  ): string
}
