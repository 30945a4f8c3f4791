// The limiters the throttle benchmark times, each doing the same work: one check (count the
// request against its client's counter, decide allowed / refused) per call.
//
// make(rule, ctx) builds one limiter for `rule` ({ max, windowMs }) and returns
//   check(client)          one check, for the verification: true when allowed (maybe a promise)
//   loop(n, start)         n checks over the clients round robin from index `start`; returns how
//                          many were refused (maybe a promise). The timed loop: written per
//                          limiter, with the limiter's own call and nothing else in it.
//   close()
// ctx: { clients (addresses), prefix (random Redis key prefix), redisUrl }.

const FW_THROTTLE = '../../dist/throttle/index.js'
const FW_RUNTIME = '../../dist/runtime/index.js'

// The key the fw middleware builds for a pre-global `throttle:<max>,<seconds>` layer.
const fwKey = (rule, address) => `pre0|${rule.max},${rule.windowMs / 1000}|ip:${address}`

// rate-limiter-flexible rejects with a RateLimiterRes when refused, with an Error on failure.
const refusedByRlf = (error) => {
  if (error instanceof Error) throw error
  return true
}

async function redisClient(url, options = {}) {
  const { Redis } = await import('ioredis')
  const client = new Redis(url, { lazyConnect: true, ...options })
  await client.connect()
  return client
}

// Resolves once an ioredis client is connected (the fw store connects on its own).
function ready(client, timeoutMs = 5000) {
  if (client.status === 'ready') return Promise.resolve()
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`Redis not ready after ${timeoutMs} ms`)),
      timeoutMs,
    )
    client.once('ready', () => {
      clearTimeout(timer)
      resolve()
    })
  })
}

// A rate-limiter-flexible limiter (memory or Redis) in the harness's shape: consume() resolves
// when allowed and rejects with the limiter's result when refused.
function rlfAdapter(limiter, clients, close) {
  const count = clients.length
  return {
    check: (i) =>
      limiter.consume(clients[i]).then(
        () => true,
        (e) => !refusedByRlf(e),
      ),
    async loop(n, start) {
      let refused = 0
      for (let i = 0, j = start; i < n; i++) {
        try {
          await limiter.consume(clients[j])
        } catch (error) {
          if (refusedByRlf(error)) refused++
        }
        if (++j === count) j = 0
      }
      return refused
    },
    close,
  }
}

export const LIMITERS = [
  {
    id: 'fw-store',
    label: 'fw MemoryStore.hit()',
    backend: 'memory',
    algorithm: 'sliding window log',
    async make(rule, { clients }) {
      const { MemoryStore } = await import(FW_THROTTLE)
      const store = new MemoryStore()
      const keys = clients.map((a) => fwKey(rule, a))
      const count = keys.length
      return {
        check: (i) => store.hit(keys[i], rule).allowed,
        loop(n, start) {
          let refused = 0
          for (let i = 0, j = start; i < n; i++) {
            if (!store.hit(keys[j], rule).allowed) refused++
            if (++j === count) j = 0
          }
          return refused
        },
        close: () => store.close(),
      }
    },
  },
  {
    id: 'fw-middleware',
    label: 'fw throttle middleware (MemoryStore)',
    backend: 'memory',
    algorithm: 'sliding window log',
    async make(rule, { clients }) {
      const { createThrottle, MemoryStore } = await import(FW_THROTTLE)
      const { FwRequest, json, silentLogger } = await import(FW_RUNTIME)
      const store = new MemoryStore()
      const kernel = {
        log: silentLogger,
        env: 'production',
        urlFor: () => '',
        resolve: () => undefined,
      }
      const middleware = createThrottle({ store })(
        [String(rule.max), String(rule.windowMs / 1000)],
        kernel,
      )
      const requests = clients.map((client_ip) =>
        FwRequest.create({ uri: '/x', attributes: { client_ip, 'route.name': 'x' } }),
      )
      const response = json({ ok: true })
      const next = () => Promise.resolve(response)
      const count = requests.length
      const limited = (error) => {
        if (error?.status !== 429) throw error
        return true
      }
      let last = null
      return {
        async check(i) {
          try {
            last = await middleware(requests[i], next)
            return true
          } catch (error) {
            return !limited(error)
          }
        },
        // The response of the last check(): the headers the middleware added.
        lastResponse: () => last,
        async loop(n, start) {
          let refused = 0
          for (let i = 0, j = start; i < n; i++) {
            try {
              await middleware(requests[j], next)
            } catch (error) {
              if (limited(error)) refused++
            }
            if (++j === count) j = 0
          }
          return refused
        },
        close: () => store.close(),
      }
    },
  },
  {
    id: 'baseline-next',
    label: '(reference) await next() alone',
    backend: 'memory',
    algorithm: '—',
    reference: true,
    // What the middleware row costs without any throttle: awaiting the prebuilt response.
    async make(_rule, { clients }) {
      const { FwRequest, json } = await import(FW_RUNTIME)
      const requests = clients.map((client_ip) =>
        FwRequest.create({ uri: '/x', attributes: { client_ip, 'route.name': 'x' } }),
      )
      const response = json({ ok: true })
      const next = () => Promise.resolve(response)
      const count = requests.length
      return {
        check: null,
        async loop(n, start) {
          for (let i = 0, j = start; i < n; i++) {
            await next(requests[j])
            if (++j === count) j = 0
          }
          return 0
        },
        close() {},
      }
    },
  },
  {
    id: 'rlf-memory',
    label: 'rate-limiter-flexible RateLimiterMemory.consume()',
    backend: 'memory',
    algorithm: 'fixed window',
    async make(rule, { clients }) {
      const { RateLimiterMemory } = await import('rate-limiter-flexible')
      const limiter = new RateLimiterMemory({ points: rule.max, duration: rule.windowMs / 1000 })
      return rlfAdapter(limiter, clients, () => {})
    },
  },
  {
    id: 'erl-memory',
    label: 'express-rate-limit MemoryStore.increment()',
    backend: 'memory',
    algorithm: 'fixed window',
    // The store only counts; `totalHits > limit` is the decision express-rate-limit's middleware
    // makes with the count, so it is part of the timed check.
    async make(rule, { clients }) {
      const { MemoryStore } = await import('express-rate-limit')
      const store = new MemoryStore()
      store.init({ windowMs: rule.windowMs })
      const limit = rule.max
      const count = clients.length
      return {
        check: (i) => store.increment(clients[i]).then((info) => !(info.totalHits > limit)),
        async loop(n, start) {
          let refused = 0
          for (let i = 0, j = start; i < n; i++) {
            const info = await store.increment(clients[j])
            if (info.totalHits > limit) refused++
            if (++j === count) j = 0
          }
          return refused
        },
        close: () => store.shutdown(),
      }
    },
  },
  {
    id: 'fw-redis',
    label: 'fw RedisStore.hit()',
    backend: 'redis',
    algorithm: 'sliding window log (Lua)',
    async make(rule, { clients, prefix, redisUrl }) {
      const { createRedisStore } = await import(FW_THROTTLE)
      const store = await createRedisStore({ url: redisUrl, prefix: `${prefix}fw:` })
      const keys = clients.map((a) => fwKey(rule, a))
      const count = keys.length
      const check = (i) => store.hit(keys[i], rule).then((d) => d.allowed)
      // Fails here, not in the timed loop, when Redis is unreachable.
      await ready(store.client)
      return {
        check,
        async loop(n, start) {
          let refused = 0
          for (let i = 0, j = start; i < n; i++) {
            if (!(await store.hit(keys[j], rule)).allowed) refused++
            if (++j === count) j = 0
          }
          return refused
        },
        close: () => store.close(),
      }
    },
  },
  {
    id: 'rlf-redis',
    label: 'rate-limiter-flexible RateLimiterRedis.consume() (ioredis)',
    backend: 'redis',
    algorithm: 'fixed window (Lua)',
    async make(rule, { clients, prefix, redisUrl }) {
      const { RateLimiterRedis } = await import('rate-limiter-flexible')
      const client = await redisClient(redisUrl, { enableOfflineQueue: false })
      const limiter = new RateLimiterRedis({
        storeClient: client,
        keyPrefix: `${prefix}rlf`,
        points: rule.max,
        duration: rule.windowMs / 1000,
      })
      return rlfAdapter(limiter, clients, () => client.quit())
    },
  },
  {
    id: 'redis-ping',
    label: '(reference) ioredis PING round-trip',
    backend: 'redis',
    algorithm: '—',
    reference: true,
    async make(_rule, { redisUrl }) {
      const client = await redisClient(redisUrl)
      return {
        check: null,
        async loop(n) {
          for (let i = 0; i < n; i++) await client.ping()
          return 0
        },
        close: () => client.quit(),
      }
    },
  },
]

export const limiterById = (id) => LIMITERS.find((l) => l.id === id)
