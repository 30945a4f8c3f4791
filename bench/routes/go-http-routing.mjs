// Route lists of the Go HTTP routing benchmark suite (julienschmidt/go-http-routing-benchmark):
// githubAPI (github_test.go), parseAPI (parse_test.go) and gplusAPI (gplus_test.go), copied as
// data in their original order, commented-out entries left out. Paths use `:param` syntax.

const route = (method, path) => ({ method, path })

// http://developer.github.com/v3/
export const githubAPI = [
  // OAuth Authorizations
  route('GET', '/authorizations'),
  route('GET', '/authorizations/:id'),
  route('POST', '/authorizations'),
  route('DELETE', '/authorizations/:id'),
  route('GET', '/applications/:client_id/tokens/:access_token'),
  route('DELETE', '/applications/:client_id/tokens'),
  route('DELETE', '/applications/:client_id/tokens/:access_token'),

  // Activity
  route('GET', '/events'),
  route('GET', '/repos/:owner/:repo/events'),
  route('GET', '/networks/:owner/:repo/events'),
  route('GET', '/orgs/:org/events'),
  route('GET', '/users/:user/received_events'),
  route('GET', '/users/:user/received_events/public'),
  route('GET', '/users/:user/events'),
  route('GET', '/users/:user/events/public'),
  route('GET', '/users/:user/events/orgs/:org'),
  route('GET', '/feeds'),
  route('GET', '/notifications'),
  route('GET', '/repos/:owner/:repo/notifications'),
  route('PUT', '/notifications'),
  route('PUT', '/repos/:owner/:repo/notifications'),
  route('GET', '/notifications/threads/:id'),
  route('GET', '/notifications/threads/:id/subscription'),
  route('PUT', '/notifications/threads/:id/subscription'),
  route('DELETE', '/notifications/threads/:id/subscription'),
  route('GET', '/repos/:owner/:repo/stargazers'),
  route('GET', '/users/:user/starred'),
  route('GET', '/user/starred'),
  route('GET', '/user/starred/:owner/:repo'),
  route('PUT', '/user/starred/:owner/:repo'),
  route('DELETE', '/user/starred/:owner/:repo'),
  route('GET', '/repos/:owner/:repo/subscribers'),
  route('GET', '/users/:user/subscriptions'),
  route('GET', '/user/subscriptions'),
  route('GET', '/repos/:owner/:repo/subscription'),
  route('PUT', '/repos/:owner/:repo/subscription'),
  route('DELETE', '/repos/:owner/:repo/subscription'),
  route('GET', '/user/subscriptions/:owner/:repo'),
  route('PUT', '/user/subscriptions/:owner/:repo'),
  route('DELETE', '/user/subscriptions/:owner/:repo'),

  // Gists
  route('GET', '/users/:user/gists'),
  route('GET', '/gists'),
  route('GET', '/gists/:id'),
  route('POST', '/gists'),
  route('PUT', '/gists/:id/star'),
  route('DELETE', '/gists/:id/star'),
  route('GET', '/gists/:id/star'),
  route('POST', '/gists/:id/forks'),
  route('DELETE', '/gists/:id'),

  // Git Data
  route('GET', '/repos/:owner/:repo/git/blobs/:sha'),
  route('POST', '/repos/:owner/:repo/git/blobs'),
  route('GET', '/repos/:owner/:repo/git/commits/:sha'),
  route('POST', '/repos/:owner/:repo/git/commits'),
  route('GET', '/repos/:owner/:repo/git/refs'),
  route('POST', '/repos/:owner/:repo/git/refs'),
  route('GET', '/repos/:owner/:repo/git/tags/:sha'),
  route('POST', '/repos/:owner/:repo/git/tags'),
  route('GET', '/repos/:owner/:repo/git/trees/:sha'),
  route('POST', '/repos/:owner/:repo/git/trees'),

  // Issues
  route('GET', '/issues'),
  route('GET', '/user/issues'),
  route('GET', '/orgs/:org/issues'),
  route('GET', '/repos/:owner/:repo/issues'),
  route('GET', '/repos/:owner/:repo/issues/:number'),
  route('POST', '/repos/:owner/:repo/issues'),
  route('GET', '/repos/:owner/:repo/assignees'),
  route('GET', '/repos/:owner/:repo/assignees/:assignee'),
  route('GET', '/repos/:owner/:repo/issues/:number/comments'),
  route('POST', '/repos/:owner/:repo/issues/:number/comments'),
  route('GET', '/repos/:owner/:repo/issues/:number/events'),
  route('GET', '/repos/:owner/:repo/labels'),
  route('GET', '/repos/:owner/:repo/labels/:name'),
  route('POST', '/repos/:owner/:repo/labels'),
  route('DELETE', '/repos/:owner/:repo/labels/:name'),
  route('GET', '/repos/:owner/:repo/issues/:number/labels'),
  route('POST', '/repos/:owner/:repo/issues/:number/labels'),
  route('DELETE', '/repos/:owner/:repo/issues/:number/labels/:name'),
  route('PUT', '/repos/:owner/:repo/issues/:number/labels'),
  route('DELETE', '/repos/:owner/:repo/issues/:number/labels'),
  route('GET', '/repos/:owner/:repo/milestones/:number/labels'),
  route('GET', '/repos/:owner/:repo/milestones'),
  route('GET', '/repos/:owner/:repo/milestones/:number'),
  route('POST', '/repos/:owner/:repo/milestones'),
  route('DELETE', '/repos/:owner/:repo/milestones/:number'),

  // Miscellaneous
  route('GET', '/emojis'),
  route('GET', '/gitignore/templates'),
  route('GET', '/gitignore/templates/:name'),
  route('POST', '/markdown'),
  route('POST', '/markdown/raw'),
  route('GET', '/meta'),
  route('GET', '/rate_limit'),

  // Organizations
  route('GET', '/users/:user/orgs'),
  route('GET', '/user/orgs'),
  route('GET', '/orgs/:org'),
  route('GET', '/orgs/:org/members'),
  route('GET', '/orgs/:org/members/:user'),
  route('DELETE', '/orgs/:org/members/:user'),
  route('GET', '/orgs/:org/public_members'),
  route('GET', '/orgs/:org/public_members/:user'),
  route('PUT', '/orgs/:org/public_members/:user'),
  route('DELETE', '/orgs/:org/public_members/:user'),
  route('GET', '/orgs/:org/teams'),
  route('GET', '/teams/:id'),
  route('POST', '/orgs/:org/teams'),
  route('DELETE', '/teams/:id'),
  route('GET', '/teams/:id/members'),
  route('GET', '/teams/:id/members/:user'),
  route('PUT', '/teams/:id/members/:user'),
  route('DELETE', '/teams/:id/members/:user'),
  route('GET', '/teams/:id/repos'),
  route('GET', '/teams/:id/repos/:owner/:repo'),
  route('PUT', '/teams/:id/repos/:owner/:repo'),
  route('DELETE', '/teams/:id/repos/:owner/:repo'),
  route('GET', '/user/teams'),

  // Pull Requests
  route('GET', '/repos/:owner/:repo/pulls'),
  route('GET', '/repos/:owner/:repo/pulls/:number'),
  route('POST', '/repos/:owner/:repo/pulls'),
  route('GET', '/repos/:owner/:repo/pulls/:number/commits'),
  route('GET', '/repos/:owner/:repo/pulls/:number/files'),
  route('GET', '/repos/:owner/:repo/pulls/:number/merge'),
  route('PUT', '/repos/:owner/:repo/pulls/:number/merge'),
  route('GET', '/repos/:owner/:repo/pulls/:number/comments'),
  route('PUT', '/repos/:owner/:repo/pulls/:number/comments'),

  // Repositories
  route('GET', '/user/repos'),
  route('GET', '/users/:user/repos'),
  route('GET', '/orgs/:org/repos'),
  route('GET', '/repositories'),
  route('POST', '/user/repos'),
  route('POST', '/orgs/:org/repos'),
  route('GET', '/repos/:owner/:repo'),
  route('GET', '/repos/:owner/:repo/contributors'),
  route('GET', '/repos/:owner/:repo/languages'),
  route('GET', '/repos/:owner/:repo/teams'),
  route('GET', '/repos/:owner/:repo/tags'),
  route('GET', '/repos/:owner/:repo/branches'),
  route('GET', '/repos/:owner/:repo/branches/:branch'),
  route('DELETE', '/repos/:owner/:repo'),
  route('GET', '/repos/:owner/:repo/collaborators'),
  route('GET', '/repos/:owner/:repo/collaborators/:user'),
  route('PUT', '/repos/:owner/:repo/collaborators/:user'),
  route('DELETE', '/repos/:owner/:repo/collaborators/:user'),
  route('GET', '/repos/:owner/:repo/comments'),
  route('GET', '/repos/:owner/:repo/commits/:sha/comments'),
  route('POST', '/repos/:owner/:repo/commits/:sha/comments'),
  route('GET', '/repos/:owner/:repo/comments/:id'),
  route('DELETE', '/repos/:owner/:repo/comments/:id'),
  route('GET', '/repos/:owner/:repo/commits'),
  route('GET', '/repos/:owner/:repo/commits/:sha'),
  route('GET', '/repos/:owner/:repo/readme'),
  route('GET', '/repos/:owner/:repo/keys'),
  route('GET', '/repos/:owner/:repo/keys/:id'),
  route('POST', '/repos/:owner/:repo/keys'),
  route('DELETE', '/repos/:owner/:repo/keys/:id'),
  route('GET', '/repos/:owner/:repo/downloads'),
  route('GET', '/repos/:owner/:repo/downloads/:id'),
  route('DELETE', '/repos/:owner/:repo/downloads/:id'),
  route('GET', '/repos/:owner/:repo/forks'),
  route('POST', '/repos/:owner/:repo/forks'),
  route('GET', '/repos/:owner/:repo/hooks'),
  route('GET', '/repos/:owner/:repo/hooks/:id'),
  route('POST', '/repos/:owner/:repo/hooks'),
  route('POST', '/repos/:owner/:repo/hooks/:id/tests'),
  route('DELETE', '/repos/:owner/:repo/hooks/:id'),
  route('POST', '/repos/:owner/:repo/merges'),
  route('GET', '/repos/:owner/:repo/releases'),
  route('GET', '/repos/:owner/:repo/releases/:id'),
  route('POST', '/repos/:owner/:repo/releases'),
  route('DELETE', '/repos/:owner/:repo/releases/:id'),
  route('GET', '/repos/:owner/:repo/releases/:id/assets'),
  route('GET', '/repos/:owner/:repo/stats/contributors'),
  route('GET', '/repos/:owner/:repo/stats/commit_activity'),
  route('GET', '/repos/:owner/:repo/stats/code_frequency'),
  route('GET', '/repos/:owner/:repo/stats/participation'),
  route('GET', '/repos/:owner/:repo/stats/punch_card'),
  route('GET', '/repos/:owner/:repo/statuses/:ref'),
  route('POST', '/repos/:owner/:repo/statuses/:ref'),

  // Search
  route('GET', '/search/repositories'),
  route('GET', '/search/code'),
  route('GET', '/search/issues'),
  route('GET', '/search/users'),
  route('GET', '/legacy/issues/search/:owner/:repository/:state/:keyword'),
  route('GET', '/legacy/repos/search/:keyword'),
  route('GET', '/legacy/user/search/:keyword'),
  route('GET', '/legacy/user/email/:email'),

  // Users
  route('GET', '/users/:user'),
  route('GET', '/user'),
  route('GET', '/users'),
  route('GET', '/user/emails'),
  route('POST', '/user/emails'),
  route('DELETE', '/user/emails'),
  route('GET', '/users/:user/followers'),
  route('GET', '/user/followers'),
  route('GET', '/users/:user/following'),
  route('GET', '/user/following'),
  route('GET', '/user/following/:user'),
  route('GET', '/users/:user/following/:target_user'),
  route('PUT', '/user/following/:user'),
  route('DELETE', '/user/following/:user'),
  route('GET', '/users/:user/keys'),
  route('GET', '/user/keys'),
  route('GET', '/user/keys/:id'),
  route('POST', '/user/keys'),
  route('DELETE', '/user/keys/:id'),
]

// https://parse.com/docs/rest#summary
export const parseAPI = [
  // Objects
  route('POST', '/1/classes/:className'),
  route('GET', '/1/classes/:className/:objectId'),
  route('PUT', '/1/classes/:className/:objectId'),
  route('GET', '/1/classes/:className'),
  route('DELETE', '/1/classes/:className/:objectId'),

  // Users
  route('POST', '/1/users'),
  route('GET', '/1/login'),
  route('GET', '/1/users/:objectId'),
  route('PUT', '/1/users/:objectId'),
  route('GET', '/1/users'),
  route('DELETE', '/1/users/:objectId'),
  route('POST', '/1/requestPasswordReset'),

  // Roles
  route('POST', '/1/roles'),
  route('GET', '/1/roles/:objectId'),
  route('PUT', '/1/roles/:objectId'),
  route('GET', '/1/roles'),
  route('DELETE', '/1/roles/:objectId'),

  // Files
  route('POST', '/1/files/:fileName'),

  // Analytics
  route('POST', '/1/events/:eventName'),

  // Push Notifications
  route('POST', '/1/push'),

  // Installations
  route('POST', '/1/installations'),
  route('GET', '/1/installations/:objectId'),
  route('PUT', '/1/installations/:objectId'),
  route('GET', '/1/installations'),
  route('DELETE', '/1/installations/:objectId'),

  // Cloud Functions
  route('POST', '/1/functions'),
]

// Google+ https://developers.google.com/+/api/latest/ (a subset of the real API)
export const gplusAPI = [
  // People
  route('GET', '/people/:userId'),
  route('GET', '/people'),
  route('GET', '/activities/:activityId/people/:collection'),
  route('GET', '/people/:userId/people/:collection'),
  route('GET', '/people/:userId/openIdConnect'),

  // Activities
  route('GET', '/people/:userId/activities/:collection'),
  route('GET', '/activities/:activityId'),
  route('GET', '/activities'),

  // Comments
  route('GET', '/activities/:activityId/comments'),
  route('GET', '/comments/:commentId'),

  // Moments
  route('POST', '/people/:userId/moments/:collection'),
  route('GET', '/people/:userId/moments/:collection'),
  route('DELETE', '/moments/:id'),
]
