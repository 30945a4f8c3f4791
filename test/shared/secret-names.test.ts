/**
 * Which names carry credentials: `isSecretName` for fields, headers and query parameters alike;
 * `isSecretParam` adds the query parameters that are credentials only there (a signed URL's
 * `_sig`, an Azure SAS `sig`, an OAuth `code`). Any case, with '-' and '_' ignored.
 */
import { describe, expect, it } from 'vitest'
import { isSecretName, isSecretParam } from '../../src/shared/secret-names.js'

describe('isSecretParam', () => {
  it.each([
    'X-Amz-Signature',
    'X-Amz-Credential',
    'X-Amz-Security-Token',
    'X-Goog-Signature',
    'X-Goog-Credential',
    'x-goog-signature',
    'sig',
    'SIG',
    '_sig',
    'signature',
    'access_token',
    'api_key',
    'apikey',
    'API_KEY',
    'code',
    'Code',
    'client_secret',
    'password',
  ])('takes %s', (name) => {
    expect(isSecretParam(name)).toBe(true)
  })

  it.each(['page', 'state', 'X-Amz-Expires', 'X-Amz-Date', 'X-Goog-Algorithm', 'sigma', 'zipcode'])(
    'leaves %s',
    (name) => {
      expect(isSecretParam(name)).toBe(false)
    },
  )
})

describe('isSecretName', () => {
  it('takes signatures and credentials, but not an error code or `sig` outside a query', () => {
    expect(isSecretName('X-Hub-Signature-256')).toBe(true)
    expect(isSecretName('credentials')).toBe(true)
    expect(isSecretName('googleCredential')).toBe(true)
    expect(isSecretName('code')).toBe(false)
    expect(isSecretName('sig')).toBe(false)
  })
})
