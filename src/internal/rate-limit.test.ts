import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { UserError } from './errors.js';
import {
  defaultBurst,
  formatRate,
  formatRateLimit,
  isValidRateLimit,
  parseBurst,
  parseRate,
  replenishRateText,
} from './rate-limit.js';

describe('rate limit text', () => {
  test('rates per second, minute or hour, and unlimited', () => {
    assert.equal(parseRate('10', '--rate'), 10);
    assert.equal(parseRate('10/s', '--rate'), 10);
    assert.equal(parseRate('2.5/sec', '--rate'), 2.5);
    assert.equal(parseRate('600/min', '--rate'), 10);
    assert.equal(parseRate('30/m', '--rate'), 0.5);
    assert.equal(parseRate('3600/h', '--rate'), 1);
    assert.equal(parseRate('1/hour', '--rate'), 1 / 3600);
    assert.equal(parseRate(' UNLIMITED ', '--rate'), 'unlimited');
  });

  test('malformed or absurd rates name the option', () => {
    for (const text of ['', 'ten', '-1', '0', '0/s', '10/day', '1e3', '10 /s', '2000000/s', '1/h/s']) {
      assert.throws(
        () => parseRate(text, '--rate-limit'),
        (error: unknown) => error instanceof UserError && error.shortMessage.startsWith('--rate-limit'),
        text,
      );
    }
  });

  test('bursts are whole numbers ≥ 1; the default is one second of the rate', () => {
    assert.equal(parseBurst('20', '--burst'), 20);
    for (const text of ['0', '1.5', '-2', 'x', ''])
      assert.throws(() => parseBurst(text, '--burst'), UserError);
    assert.equal(defaultBurst(10), 10);
    assert.equal(defaultBurst(2.5), 3);
    assert.equal(defaultBurst(1 / 60), 1);
  });

  test('rates read back as they were written', () => {
    assert.equal(formatRate(10), '10/s');
    assert.equal(formatRate(0.5), '30/min');
    assert.equal(formatRate(1 / 60), '1/min');
    assert.equal(formatRate(1 / 3600), '1/h');
    assert.equal(formatRate(1 / 7), '0.142857/s');
    assert.equal(formatRateLimit({ perSecond: 10, burst: 20 }), '10/s burst 20');
    assert.equal(formatRateLimit('unlimited'), 'unlimited');
    assert.equal(replenishRateText(10), '10');
    assert.equal(replenishRateText(0.5), '0.5');
    assert.equal(replenishRateText(1 / 60), '0.0166667');
  });

  test('what the parsers produce is valid, and nothing else', () => {
    assert.ok(isValidRateLimit({ perSecond: parseRate('1/h', 'x') as number, burst: 1 }));
    for (const limit of [
      { perSecond: 0, burst: 1 },
      { perSecond: Number.POSITIVE_INFINITY, burst: 1 },
      { perSecond: 1, burst: 0 },
      { perSecond: 1, burst: 2.5 },
    ]) {
      assert.equal(isValidRateLimit(limit), false, JSON.stringify(limit));
    }
  });
});
