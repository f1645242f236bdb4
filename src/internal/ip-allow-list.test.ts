import assert from 'node:assert/strict';
import { BlockList } from 'node:net';
import { describe, test } from 'node:test';
import { UserError } from './errors.js';
import { canonicalCidr, clientNetwork, createIpAllowList, isWidePublicRange } from './ip-allow-list.js';

describe('canonical CIDRs', () => {
  test('addresses and networks of both families get one text form', () => {
    const cases: [string, string][] = [
      ['10.0.0.0/8', '10.0.0.0/8'],
      [' 192.0.2.7 ', '192.0.2.7/32'],
      ['0.0.0.0/0', '0.0.0.0/0'],
      ['2001:DB8::/32', '2001:db8::/32'],
      ['2001:0db8:0000:0000:0000:0000:0000:0001', '2001:db8::1/128'],
      ['::1', '::1/128'],
      ['::/0', '::/0'],
      ['fe80::/10', 'fe80::/10'],
      // RFC 5952: the longest zero run is compressed, the first of equal runs, never a single group.
      ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1/128'],
      ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1/128'],
      // IPv4-mapped networks are written as IPv4: they match the same clients.
      ['::ffff:10.0.0.0/104', '10.0.0.0/8'],
      ['::ffff:c000:207', '192.0.2.7/32'],
    ];
    for (const [input, expected] of cases) assert.equal(canonicalCidr(input), expected, input);
    // Canonical text is a fixed point.
    for (const [, expected] of cases) assert.equal(canonicalCidr(expected), expected);
  });

  test('anything else is a one-line UserError that says what is wrong', () => {
    const bad: [string, RegExp][] = [
      ['', /not an IP address or CIDR/],
      ['10.0.0', /not an IP address/],
      ['10.0.0.256', /not an IP address/],
      ['010.0.0.1', /not an IP address/], // leading zero: octal to some tools
      ['10.0.0.0/33', /prefix length must be 0\.\.32/],
      ['2001:db8::/129', /prefix length must be 0\.\.128/],
      ['10.0.0.0/-1', /prefix length/],
      ['10.0.0.0/', /prefix length/],
      ['1::2::3', /not an IP address/],
      ['1:2:3:4:5:6:7:8:9', /not an IP address/],
      ['fe80::1%eth0', /not an IP address/],
      ['example.com', /not an IP address/],
      ['10.1.2.3/8', /host bits set; the network is 10\.0\.0\.0\/8/],
      ['2001:db8::1/32', /host bits set; the network is 2001:db8::\/32/],
    ];
    for (const [input, message] of bad) {
      assert.throws(
        () => canonicalCidr(input),
        (error: unknown) => error instanceof UserError && message.test(error.shortMessage),
        input,
      );
    }
  });
});

describe('allow-list matching', () => {
  test('matches both families, IPv4-mapped client addresses and zone suffixes', () => {
    const list = createIpAllowList(['10.0.0.0/8', '192.0.2.7/32', '2001:db8::/32']);
    for (const ip of [
      '10.0.0.1',
      '10.255.255.255',
      '192.0.2.7',
      '::ffff:10.1.2.3',
      '::ffff:c000:207',
      '2001:db8::5',
      '2001:db8:ffff::1',
    ]) {
      assert.equal(list.allows(ip), true, ip);
    }
    for (const ip of [
      '11.0.0.1',
      '9.255.255.255',
      '192.0.2.8',
      '2001:db9::1',
      '::1',
      '127.0.0.1',
      '::ffff:11.0.0.1',
      '',
      'junk',
      '10.0.0',
    ]) {
      assert.equal(list.allows(ip), false, ip);
    }
    assert.equal(createIpAllowList(['fe80::/10']).allows('fe80::1%eth0'), true);
  });

  test('0.0.0.0/0 is every IPv4 client and ::/0 every client', () => {
    assert.equal(createIpAllowList(['0.0.0.0/0']).allows('203.0.113.9'), true);
    assert.equal(createIpAllowList(['0.0.0.0/0']).allows('2001:db8::1'), false);
    assert.equal(createIpAllowList(['::/0']).allows('2001:db8::1'), true);
    assert.equal(createIpAllowList(['::/0']).allows('203.0.113.9'), true);
  });

  test('a damaged stored entry matches nothing, so the key is refused rather than opened', () => {
    assert.equal(createIpAllowList(['not-a-cidr']).allows('10.0.0.1'), false);
    const list = createIpAllowList(['bad', '10.0.0.0/8']);
    assert.equal(list.allows('10.0.0.1'), true);
    assert.deepEqual(list.cidrs, ['10.0.0.0/8']);
  });

  test('agrees with node:net BlockList on random addresses and prefixes', () => {
    let seed = 42;
    const rand = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    const v4 = () => [rand(256), rand(256), rand(256), rand(256)].join('.');
    const v6 = () =>
      Array.from({ length: 8 }, () => (rand(4) === 0 ? 0 : rand(65_536)).toString(16)).join(':');
    for (let round = 0; round < 200; round++) {
      const family = rand(2) === 0 ? 'ipv4' : 'ipv6';
      const bits = family === 'ipv4' ? 32 : 128;
      const prefix = rand(bits + 1);
      const base = family === 'ipv4' ? v4() : v6();
      // Our parser insists on a network address; BlockList masks by itself.
      const blockList = new BlockList();
      blockList.addSubnet(base, prefix, family);
      const network = (() => {
        try {
          return canonicalCidr(`${base}/${prefix}`);
        } catch (error) {
          return /network is (\S+)$/.exec((error as UserError).shortMessage)![1]!;
        }
      })();
      const list = createIpAllowList([network]);
      for (let i = 0; i < 20; i++) {
        // Half the probes share a long prefix with the network, so both outcomes are exercised.
        const probe = i % 2 === 0 ? base : family === 'ipv4' ? v4() : v6();
        assert.equal(list.allows(probe), blockList.check(probe, family), `${probe} in ${network}`);
      }
    }
  });

  test('a check costs well under a microsecond (best of 5 rounds; 2 µs allows for a loaded machine)', () => {
    const list = createIpAllowList(['10.0.0.0/8', '2001:db8::/32']);
    const n = 100_000;
    let best = Number.POSITIVE_INFINITY;
    for (let round = 0; round < 5; round++) {
      let hits = 0;
      const start = performance.now();
      for (let i = 0; i < n; i++) if (list.allows('::ffff:10.1.2.3')) hits++;
      best = Math.min(best, ((performance.now() - start) * 1000) / n);
      assert.equal(hits, n);
    }
    assert.ok(best < 2, `${best.toFixed(3)} µs per check`);
  });
});

describe('ranges too wide to trust as proxies', () => {
  test('public space wider than an IPv4 /8 or IPv6 /16 is wide; non-public space never is', () => {
    const wide = [
      '0.0.0.0/0',
      '::/0',
      '0.0.0.0/1',
      '128.0.0.0/1',
      '8.0.0.0/7',
      '2000::/3',
      '2000::/15',
      // Each holds ::ffff:0:0/96, every IPv4 client of a dual-stack socket.
      '::/8',
      '::/80',
      '::ffff:0:0/96',
      '::ffff:0:0/97',
      // Wider than the private block it starts with.
      '10.0.0.0/7',
      'fc00::/6',
    ];
    const narrow = [
      '8.0.0.0/8',
      '203.0.113.0/24',
      '192.0.2.7',
      '2001::/16',
      '2a06:98c0::/29',
      '::ffff:8.0.0.0/104',
      // IPv4-compatible (::a.b.c.d), not mapped: no IPv4 client has such an address.
      '::/96',
      '10.0.0.0/8',
      '172.16.0.0/12',
      '192.168.0.0/16',
      '127.0.0.0/8',
      '100.64.0.0/10',
      '169.254.0.0/16',
      '::1',
      'fc00::/7',
      'fd00::/8',
      'fe80::/10',
    ];
    for (const range of wide) assert.equal(isWidePublicRange(range), true, range);
    for (const range of narrow) assert.equal(isWidePublicRange(range), false, range);
    assert.throws(() => isWidePublicRange('10.0.0.1/8'), UserError);
  });
});

describe('client networks', () => {
  test('IPv4 is the address (also IPv4-mapped), IPv6 its /64, anything else itself', () => {
    assert.equal(clientNetwork('192.0.2.7'), '192.0.2.7');
    assert.equal(clientNetwork('::ffff:192.0.2.7'), '192.0.2.7');
    assert.equal(clientNetwork('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
    assert.equal(clientNetwork('2001:DB8:1:2::9'), '2001:db8:1:2::/64');
    assert.equal(clientNetwork('fe80::1%eth0'), 'fe80::/64');
    assert.equal(clientNetwork('::1'), '::/64');
    assert.equal(clientNetwork('not an address'), 'not an address');
  });
});
