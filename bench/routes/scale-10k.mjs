// Generates the 10,000-route table of the fw scale test, deterministically, in fw syntax.
// Spread over 300 first segments (/res0 ... /res299), each of which gets every kind of route:
// 40% static, 40% with one or two params, 10% int params, 5% regex params, 5% catch-alls.
// Each route comes with a sample request path and the params it should produce.

const FIRST_SEGMENTS = 300
const METHODS = ['GET', 'GET', 'GET', 'POST', 'PUT', 'DELETE']

// Route makers by kind; `p` is the first segment, `j` makes the path unique within it, `i` is
// the route index (used in sample values).
const KINDS = {
  static: (p, j) => ({ pattern: `${p}/static${j}`, path: `${p}/static${j}`, params: {} }),
  deepStatic: (p, j) => ({
    pattern: `${p}/static${j}/sub/page`,
    path: `${p}/static${j}/sub/page`,
    params: {},
  }),
  oneParam: (p, j, i) => ({
    pattern: `${p}/one${j}/{id}`,
    path: `${p}/one${j}/v${i}`,
    params: { id: `v${i}` },
  }),
  twoParams: (p, j, i) => ({
    pattern: `${p}/two${j}/{id}/items/{itemId}`,
    path: `${p}/two${j}/v${i}/items/w${i}`,
    params: { id: `v${i}`, itemId: `w${i}` },
  }),
  paramFirst: (p, j, i) => ({
    pattern: `${p}/{rid}/rel${j}`,
    path: `${p}/r${i}/rel${j}`,
    params: { rid: `r${i}` },
  }),
  int: (p, j, i) => ({
    pattern: `${p}/num${j}/{id:int}`,
    path: `${p}/num${j}/${i}`,
    params: { id: String(i) },
  }),
  regex: (p, j) => ({
    pattern: `${p}/code${j}/{code:[A-Z]{3}}`,
    path: `${p}/code${j}/ABC`,
    params: { code: 'ABC' },
  }),
  catchAll: (p, j, i) => ({
    pattern: `${p}/files${j}/{path:.*}`,
    path: `${p}/files${j}/a/b/${i}.txt`,
    params: { path: `a/b/${i}.txt` },
  }),
}

// 20 slots: 8 static (40%), 8 params (40%), 2 int (10%), 1 regex (5%), 1 catch-all (5%).
const SLOTS = [
  ...Array(4).fill(KINDS.static),
  ...Array(4).fill(KINDS.deepStatic),
  ...Array(4).fill(KINDS.oneParam),
  ...Array(3).fill(KINDS.twoParams),
  KINDS.paramFirst,
  ...Array(2).fill(KINDS.int),
  KINDS.regex,
  KINDS.catchAll,
]

function routeFor(i) {
  const first = i % FIRST_SEGMENTS
  const j = Math.floor(i / FIRST_SEGMENTS)
  const kind = SLOTS[(first + j) % SLOTS.length]
  const { pattern, path, params } = kind(`/res${first}`, j, i)
  const method = METHODS[(first + j) % METHODS.length]
  return { method, pattern, catchAll: kind === KINDS.catchAll, sample: { path, params } }
}

// [{ method, pattern, catchAll, sample: { path, params } }]; the build names routes[i] `r<i>`.
// Catch-alls come last: fw requires a catch-all to be registered after its scope's routes.
export function generateScaleRoutes(count = 10_000) {
  const routes = Array.from({ length: count }, (_, i) => routeFor(i))
  return [...routes.filter((r) => !r.catchAll), ...routes.filter((r) => r.catchAll)]
}
