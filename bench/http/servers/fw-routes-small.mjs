// Routes file of fw's small app (see fw-routes.mjs), for `fw route:cache build --routes`.
import { small } from './fw-routes.mjs'

export default small
