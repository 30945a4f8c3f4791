/**
 * The example application (DESIGN.md, "The example application"): every feature of the router
 * and the runtime. Serve it with
 *
 *   npx fw serve --routes routes.example.ts
 *
 * Handlers receive the request first, then the route parameters (domain placeholders included);
 * they return plain data (answered as JSON), a response, or throw a typed HTTP error.
 */
import {
  defineRoutes,
  ERROR_HEADERS,
  HttpError,
  json,
  methodNotAllowed,
  noContent,
  renderError,
  silentLogger,
  temporaryUrlFor,
  tooManyRequests,
  unsupportedMediaType,
  urlFor,
  type FwRequest,
} from 'fw'
import { authRoutes } from 'fw/auth'

const showUser = (version: string) => (_req: FwRequest, id: number) => ({ id, version })
const echoParam = (name: string) => (_req: FwRequest, value: string | number | null) => ({
  [name]: value,
})

const BODY_TYPES = ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data']

/** Echoes the method, parsed input, query and uploaded files; other body types get 415. */
function echo(req: FwRequest) {
  const type = req.getHeaderLine('content-type').split(';')[0]!.trim().toLowerCase()
  const bodyless = type === '' && req.getContent() === ''
  if (!bodyless && !BODY_TYPES.includes(type))
    throw unsupportedMediaType(`Unsupported media type "${type || 'none'}"`)
  const files = Object.entries(req.files()).flatMap(([field, value]) =>
    (Array.isArray(value) ? value : [value]).map((file) => ({
      field,
      name: file.getClientFilename(),
      size: file.getSize(),
      type: file.getClientMediaType(),
    })),
  )
  return {
    method: req.getMethod(),
    type: bodyless ? null : type,
    input: req.input(),
    query: req.query(),
    files,
  }
}

class ResourceController {
  store(req: FwRequest) {
    const id = 1
    const location = urlFor('demo.resource.show', { id })
    return json({ id, name: req.input('name'), created: true }, 201, { location })
  }
  show(_req: FwRequest, id: number) {
    return { id }
  }
  options() {
    return noContent({ allow: 'OPTIONS, POST', 'access-control-allow-methods': 'OPTIONS, POST' })
  }
}

/**
 * The catch-all fallback: 404 `{error, path}` with the headers every error response carries. A
 * client that asks for problem+json or plain text gets that instead, as from any other error
 * (DESIGN: "Error bodies are negotiated from Accept"), with `path` as an extra member.
 */
function fallback(req: FwRequest) {
  const path = req.getPath()
  const error = new HttpError(404, { body: { path } })
  // The boundary's own negotiation decides: JSON stays {error, path}, anything else is rendered.
  const rendered = renderError(error, {
    accept: req.getHeaderLine('accept'),
    path,
    requestId: undefined,
    debug: false,
    log: silentLogger,
  })
  if (String(rendered.headers['content-type']).startsWith('application/json'))
    return json({ error: 'Not Found', path }, 404, ERROR_HEADERS)
  throw error
}

export default defineRoutes((r) => {
  // Authentication (spec "Endpoints"): /auth/login|refresh|me|logout, the refresh-token
  // variation under /rt, /oauth/token and /admin/users (role admin). Logins: throttle:5,300.
  authRoutes(r)

  // Versioning: the same handlers side by side under /api/v1 and /api/v2 (spec "Versioning").
  r.group({ prefix: '/api/v1', name: 'v1.', middleware: ['throttle:60,60'] }, (r) => {
    r.get('/users/{id:int}', showUser('v1'), 'users.show')
    r.get('/limited', () => ({ limited: true }), 'limited').withMiddleware('throttle:5,60')
  })
  r.group('/api/v2', null, [], 'v2.', (r) => {
    r.get('/users/{id:int}', showUser('v2')).withName('users.show')
  })

  // Showcase: each answers JSON that echoes what it received.
  r.group({ prefix: '/demo', name: 'demo.' }, (r) => {
    r.get('/int/{id:int}', echoParam('id'), 'int')
    r.get('/slug/{slug:slug}', echoParam('slug'), 'slug')
    r.get('/uuid/{id:uuid}', echoParam('id'), 'uuid')
    r.get('/hex/{value:hex}', echoParam('value'), 'hex')
    r.get('/code/{code:[A-Z]{3}}', echoParam('code'), 'code')
    r.get('/optional/{name?}', echoParam('name'), 'optional')
    for (const verb of ['post', 'put', 'patch', 'delete'] as const)
      r[verb]('/echo', echo, `echo.${verb}`)
    r.post('/resource', [ResourceController, 'store'], { name: 'resource.store' })
    r.get('/resource/{id:int}', [ResourceController, 'show'], 'resource.show')
    r.options('/resource', [ResourceController, 'options'], 'resource.options')
    r.get(
      '/url/{id:int}',
      (_req: FwRequest, id: number) => ({
        relative: urlFor('demo.url', { id }, { tab: 'posts' }),
        absolute: urlFor('demo.url', { id }, { tab: 'posts' }, true),
      }),
      'url',
    )
    r.get(
      '/sign/{id:int}',
      (_req: FwRequest, id: number) => ({
        url: temporaryUrlFor('demo.signed', { id }, {}, 300),
      }),
      'sign',
    )
    r.get('/signed/{id:int}', (_req: FwRequest, id: number) => ({ id, signed: true }), {
      name: 'signed',
      middleware: ['verifySignedUrl'],
    })
    r.get(
      '/error/{code:int}',
      (_req: FwRequest, code: number) => {
        // The headers these statuses call for: 405 says what this path allows, 429 when to retry.
        if (code === 405) throw methodNotAllowed(['GET', 'HEAD'])
        if (code === 429) throw tooManyRequests(undefined, { headers: { 'retry-after': '60' } })
        throw new HttpError(code >= 400 && code <= 599 ? code : 400)
      },
      'error',
    )
    r.get(
      '/crash',
      () => {
        throw new Error('boom: this message must never reach the client')
      },
      'crash',
    )
    r.get(
      '/negotiate',
      (req: FwRequest) => {
        const type = req.getAttribute('negotiated.type')
        const charset = req.getAttribute('negotiated.charset')
        const locale = req.getAttribute('locale')
        // Each attribute under its name, and a dotted name nested as well (negotiated.type).
        return {
          'negotiated.type': type,
          'negotiated.charset': charset,
          locale,
          negotiated: { type, charset },
        }
      },
      { name: 'negotiate', middleware: ['negotiate'] },
    )
    r.get(
      '/attributes',
      (req: FwRequest) => {
        const traceId = req.getAttribute('trace.trace_id')
        const routeName = req.getAttribute('route.name')
        // Each attribute under its name, and a dotted name nested as well (trace.trace_id).
        return {
          client_ip: req.getAttribute('client_ip'),
          request_id: req.getAttribute('request_id'),
          'trace.trace_id': traceId,
          'route.name': routeName,
          trace: { trace_id: traceId },
          route: { name: routeName },
        }
      },
      'attributes',
    )
    r.get('/files/{path:.*}', echoParam('path'), 'files')
  })

  // A domain group: the {account} placeholder reaches the handler like a path parameter.
  r.group({ domain: '{account}.localhost', name: 'tenant.' }, (r) => {
    r.get('/whoami', (_req: FwRequest, account: string) => ({ account }), 'whoami')
  })

  // Last, the catch-all fallback: 404 {error, path}, with the headers every error response carries.
  r.get('/{path:.*}', fallback, 'fallback')
})
