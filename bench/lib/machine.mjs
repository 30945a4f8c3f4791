// Describes the machine the benchmark ran on: CPU model (from /proc/cpuinfo), cores, memory,
// OS, node version and the date.

import { readFileSync } from 'node:fs'
import os from 'node:os'

function cpuModel() {
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('model name'))
    if (line) return line.split(':')[1].trim()
  } catch {}
  return os.cpus()[0]?.model ?? 'unknown'
}

export function describeMachine() {
  return {
    cpu: cpuModel(),
    cores: os.availableParallelism(),
    memoryGiB: (os.totalmem() / 2 ** 30).toFixed(1),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    date: new Date().toISOString().replace('T', ' ').slice(0, 16) + ' UTC',
  }
}

// The "## Machine" heading and the lines every results section starts it with; `label` names the
// versions list ("Routers", "Packages").
export function machineLines(machine, label, versions) {
  const list = Object.entries(versions)
    .map(([name, v]) => `${name} ${v}`)
    .join(', ')
  return [
    '## Machine',
    '',
    `- CPU: ${machine.cpu} (${machine.cores} cores), ${machine.memoryGiB} GiB RAM`,
    `- OS: ${machine.os}`,
    `- Node ${machine.node}`,
    `- Date: ${machine.date}`,
    `- ${label}: ${list}`,
  ]
}
