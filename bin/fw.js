#!/usr/bin/env node
// The fw executable: load the built CLI and run it. Nothing else belongs here.
// The cache's shards load through require() of ES modules (Node 20.19+, 22.12+): without it,
// say so here rather than have every served request's cache look "damaged".
if (!process.features.require_module) {
  console.error(`error fw needs Node.js 20.19+ or 22.12+ (this is ${process.version})`)
  console.error('  hint: Install a newer Node.js, e.g. the current 22 or 24 LTS.')
  process.exit(1)
}
const { main } = await import('../dist/cli/index.js')

const code = await main(process.argv)
// A failure the command already recorded (fw serve: an error the app left uncaught while it
// stopped) is not turned back into success.
if (code !== 0 || !process.exitCode) process.exitCode = code
