#!/usr/bin/env node
// The fw executable: load the built CLI and run it. Nothing else belongs here.
import { main } from '../dist/cli/index.js'

const code = await main(process.argv)
// A failure the command already recorded (fw serve: an error the app left uncaught while it
// stopped) is not turned back into success.
if (code !== 0 || !process.exitCode) process.exitCode = code
