/** Address buckets: IPv6 per /64, IPv4-mapped IPv6 as its IPv4 address, IPv4 as is. */
import { describe, expect, it } from 'vitest'
import { addressBucket } from '../../src/throttle/client-key.js'

describe('addressBucket', () => {
  it('keeps IPv4 addresses as they are', () => {
    expect(addressBucket('203.0.113.9')).toBe('203.0.113.9')
  })

  it('buckets IPv6 clients by /64', () => {
    const a = addressBucket('2001:db8:abcd:12:1:2:3:4')
    expect(a).toBe('2001:db8:abcd:12::/64')
    expect(addressBucket('2001:0db8:abcd:0012:ffff:ffff:ffff:ffff')).toBe(a)
    expect(addressBucket('2001:db8:abcd:12::1')).toBe(a)
    expect(addressBucket('2001:db8:abcd:13::1')).not.toBe(a)
  })

  it('normalises zero runs, case, brackets and zone ids', () => {
    expect(addressBucket('2001:DB8::1')).toBe('2001:db8::/64')
    expect(addressBucket('[2001:db8::1]')).toBe('2001:db8::/64')
    expect(addressBucket('fe80::1%eth0')).toBe('fe80::/64')
    expect(addressBucket('::1')).toBe('::/64')
  })

  it('counts IPv4-mapped IPv6 addresses as their IPv4 address, each its own bucket', () => {
    expect(addressBucket('::ffff:1.2.3.4')).toBe('1.2.3.4')
    expect(addressBucket('::ffff:5.6.7.8')).toBe('5.6.7.8')
    expect(addressBucket('::FFFF:0102:0304')).toBe('1.2.3.4')
    expect(addressBucket('0:0:0:0:0:ffff:1.2.3.4')).toBe('1.2.3.4')
  })

  it('uses another prefix length when told, and whole addresses at /128', () => {
    expect(addressBucket('2001:db8:abcd:12:1:2:3:4', 48)).toBe('2001:db8:abcd::/48')
    expect(addressBucket('2001:db8:abcd:12:1:2:3:4', 56)).toBe('2001:db8:abcd::/56')
    expect(addressBucket('2001:db8:abcd:1234:1:2:3:4', 56)).toBe('2001:db8:abcd:1200::/56')
    expect(addressBucket('2001:db8:abcd:12:1:2:3:4', 128)).toBe('2001:db8:abcd:12:1:2:3:4')
  })

  it('passes anything that is not an address through unchanged', () => {
    expect(addressBucket('unknown')).toBe('unknown')
  })
})
