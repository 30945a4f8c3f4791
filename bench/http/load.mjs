// The load generator (autocannon, in the parent process: never in a server process) and the
// check of each server's answer before it is timed.

import autocannon from 'autocannon'

export const CONNECTIONS = 50
export const PIPELINING = 1

// One autocannon run against `port` for `durationS` seconds.
export async function load(port, scenario, durationS) {
  const result = await autocannon({
    url: `http://127.0.0.1:${port}${scenario.path}`,
    method: scenario.method,
    headers: scenario.headers,
    body: scenario.body,
    connections: CONNECTIONS,
    pipelining: PIPELINING,
    duration: durationS,
  })
  return {
    ok2xx: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    durationS: result.duration,
    rps: result['2xx'] / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
  }
}

// null when the server answers the scenario right, else what was wrong.
export async function verify(port, scenario) {
  const base = `http://127.0.0.1:${port}`
  const init = { method: scenario.method, headers: scenario.headers, body: scenario.body }
  const res = await fetch(base + scenario.path, init)
  const text = await res.text()
  if (res.status !== 200) return `status ${res.status}: ${text.slice(0, 120)}`
  const type = res.headers.get('content-type') ?? ''
  if (!type.startsWith('application/json')) return `content-type ${type}`
  if (text !== scenario.expected) return `body ${text.slice(0, 120)}`
  if (scenario.notFound) {
    const miss = await fetch(base + scenario.notFound, { headers: scenario.headers })
    await miss.arrayBuffer()
    if (miss.status !== 404) return `${scenario.notFound} answered ${miss.status}, not 404`
  }
  return null
}
