import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { redactUrls } from './errors.js';

describe('redactUrls', () => {
  test('an RPC URL keeps only its host', () => {
    assert.equal(
      redactUrls('cannot reach https://user:secret@node.example:8545/v3/KEY123?token=abc now'),
      'cannot reach https://node.example:8545/… now',
    );
    assert.equal(redactUrls('ws://127.0.0.1:8546'), 'ws://127.0.0.1:8546/…');
  });

  test('a PostgreSQL URL loses its credentials and parameters, keeps host and database', () => {
    const text =
      'cannot connect to postgres://tq:s3cret-pw@db.internal:5432/tokenquery?sslpassword=sslsecret&options=-c%20x';
    const redacted = redactUrls(text);
    assert.equal(redacted, 'cannot connect to postgres://db.internal:5432/tokenquery');
    assert.equal(redactUrls('POSTGRESQL://u:p@h/db'), 'POSTGRESQL://h/db');
    assert.equal(redactUrls('postgres://h'), 'postgres://h/');
  });

  test('a password with unescaped @, /, ? or # does not leak', () => {
    for (const password of ['p@ss', 'pa/ss', 'pa?ss', 'pa#ss', 'a@b/c?d#e']) {
      const redacted = redactUrls(`"postgres://user:${password}@host:5432/db"`);
      assert.equal(redacted, '"postgres://host:5432/db"', password);
      assert.ok(!redacted.includes('user'), redacted);
      const rpc = redactUrls(`https://user:${password}@node/key`);
      assert.equal(rpc, 'https://node/…', password);
    }
  });

  test('several URLs in one text, and text without URLs, unchanged around them', () => {
    assert.equal(
      redactUrls('primary postgres://a:x@p/db1, replica postgresql://b:y@r/db2; rpc http://c:z@n/k'),
      'primary postgres://p/db1, replica postgresql://r/db2; rpc http://n/…',
    );
    assert.equal(redactUrls('no url here: user:pass@host'), 'no url here: user:pass@host');
    assert.equal(
      redactUrls('only http:// and https:// work, got ws://'),
      'only http:// and https:// work, got ws://',
    );
  });
});
