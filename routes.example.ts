/**
 * The example application's routes (DESIGN.md, "The example application"): every registration
 * form and parameter type of the router. Handlers receive the request first, then the route
 * parameters; they return plain data, which the runtime answers as JSON.
 *
 *   npx fw route:cache build --routes routes.example.ts
 *   npx fw routes:list --routes routes.example.ts
 */
import { defineRoutes } from 'fw'

type Request = unknown

const showUser = (version: string) => (_req: Request, id: number) => ({ id, version })
const echo = (name: string) => (_req: Request, value: string | number | null) => ({ [name]: value })

class ResourceController {
  store(): { created: boolean } {
    return { created: true }
  }
  options(): { methods: string[] } {
    return { methods: ['POST', 'OPTIONS'] }
  }
}

export default defineRoutes((r) => {
  // Versioning: the same handlers side by side under /api/v1 and /api/v2 (spec "Versioning").
  r.group({ prefix: '/api/v1', name: 'v1.', middleware: ['throttle:60,60'] }, (r) => {
    r.get('/users/{id:int}', showUser('v1'), 'users.show')
    r.get('/limited', () => ({ limited: true }), 'limited').withMiddleware('throttle:5,60')
  })
  r.group('/api/v2', null, [], 'v2.', (r) => {
    r.get('/users/{id:int}', showUser('v2')).withName('users.show')
  })

  // Showcase: each parameter form echoes what it received.
  r.group({ prefix: '/demo', name: 'demo.' }, (r) => {
    r.get('/int/{id:int}', echo('id'), 'int')
    r.get('/slug/{slug:slug}', echo('slug'), 'slug')
    r.get('/uuid/{id:uuid}', echo('id'), 'uuid')
    r.get('/hex/{value:hex}', echo('value'), 'hex')
    r.get('/code/{code:[A-Z]{3}}', echo('code'), 'code')
    r.get('/optional/{name?}', echo('name'), 'optional')
    r.post('/resource', [ResourceController, 'store'], { name: 'resource.store' })
    r.options('/resource', [ResourceController, 'options'], 'resource.options')
    r.get('/files/{path:.*}', echo('path'), 'files')
  })

  // A domain group: the {account} placeholder reaches the handler like a path parameter.
  r.group({ domain: '{account}.localhost', name: 'tenant.' }, (r) => {
    r.get('/whoami', (_req: Request, account: string) => ({ account }), 'whoami')
  })

  // Last, the catch-all fallback.
  r.get('/{path:.*}', (_req: Request, path: string) => ({ error: 'Not Found', path: `/${path}` }), 'fallback')
})
