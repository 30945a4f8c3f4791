#!/usr/bin/env node
// The fw executable: load the built CLI and run it. Nothing else belongs here.
import { main } from '../dist/cli/index.js'

process.exitCode = await main(process.argv)
