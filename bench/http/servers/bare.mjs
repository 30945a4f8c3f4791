// The ceiling: node:http with a hand-written URL split and JSON.parse, no framework. It knows
// only the three scenario paths (in the large app too: it has no router, so it pays nothing
// for the other 242 routes). The 3 no-op middleware are 3 nested awaited async calls.

import http from 'node:http'

const JSON_TYPE = 'application/json; charset=utf-8'

function send(res, status, data) {
  const body = JSON.stringify(data)
  res.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(body) })
  res.end(body)
}

const noop = async (next) => await next()

const INT = /^\d+$/

// /api/v1/users/<id>/posts/<slug> → ['', 'api', 'v1', 'users', id, 'posts', slug]
function postParams(path) {
  if (!path.startsWith('/api/v1/users/')) return null
  const parts = path.split('/')
  if (parts.length !== 7 || parts[5] !== 'posts' || parts[6] === '' || !INT.test(parts[4])) {
    return null
  }
  return { id: Number(parts[4]), slug: parts[6] }
}

function echo(req, res) {
  const chunks = []
  req.on('data', (chunk) => chunks.push(chunk))
  req.on('end', () => {
    let data
    try {
      data = JSON.parse(Buffer.concat(chunks).toString('utf8'))
    } catch {
      return send(res, 400, { error: 'Bad Request' })
    }
    send(res, 200, data)
  })
}

function listener(req, res) {
  const url = req.url
  const q = url.indexOf('?')
  const path = q === -1 ? url : url.slice(0, q)
  const method = req.method
  if (method === 'GET' && path === '/hello') return send(res, 200, { hello: 'world' })
  if (method === 'POST' && path === '/echo') return echo(req, res)
  if (method === 'GET') {
    const params = postParams(path)
    if (params !== null) {
      const handler = async () => send(res, 200, params)
      noop(() => noop(() => noop(handler)))
      return
    }
  }
  send(res, 404, { error: 'Not Found' })
}

export async function start({ host }) {
  const server = http.createServer(listener)
  await new Promise((resolve) => server.listen(0, host, resolve))
  return server.address().port
}
