/**
 * `n` and its noun, plural unless n is 1: count(1, 'route') → '1 route', count(3, 'shard') → '3 shards'.
 */
export function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`
}
