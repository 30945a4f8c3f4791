// Routes file of fw's large app (see fw-routes.mjs), for `fw route:cache build --routes`.
import { large } from './fw-routes.mjs'

export default large
