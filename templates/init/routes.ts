// Your routes. `npx fw serve --watch` serves them in development; `npx fw route:cache build`
// then `node server.mjs` in production. See the fw README for every registration form.
import { defineRoutes, json, notFound, type FwRequest } from 'fw'

const users = new Map([[1, { id: 1, name: 'Ada' }]])

export default defineRoutes((r) => {
  r.get('/', () => ({ hello: 'world' }), 'home')
  r.group({ prefix: '/api/v1', name: 'v1.' }, (r) => {
    r.get('/users/{id:int}', (_req: FwRequest, id: number) => {
      const user = users.get(id)
      if (!user) throw notFound('No such user')
      return user
    }, 'users.show')
    r.post('/users', (req: FwRequest) => json({ name: req.input('name') }, 201), 'users.store')
  })
})
