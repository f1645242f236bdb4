/**
 * A hostile ERC-20 on a real anvil node (contracts/HostileTextToken.sol): its `name()` answers a
 * 1 MiB string and its `symbol()` control and bidi characters. Indexed by the real indexer into a
 * real SQLite store, the token is stored capped and clean, and Token Info, Token List on Chain
 * and Token Transaction List serve it so (docs/api.md, "EVM token metadata").
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startApiServer } from '../api/server.js';
import { call, okData } from '../api/testing/http.js';
import { createTokenOverlay, withTokenOverlay } from '../api/token-list.js';
import { createEvmSource } from '../chains/evm/source.js';
import { createRpcClient } from '../chains/jsonrpc/rpc-client.js';
import { encodeArgs, encodeCall } from '../devchain/abi.js';
import { type AnvilInstance, startAnvil } from '../devchain/anvil.js';
import { getAccounts, getBlockNumber, sendTransaction, waitForReceipt } from '../devchain/chain.js';
import { HostileTextToken } from '../devchain/contracts.generated.js';
import { selector } from '../devchain/deploy.js';
import { silentLogger } from '../internal/logger.js';
import { waitFor } from '../internal/testing/wait.js';
import { MAX_TOKEN_NAME_CHARS, MAX_TOKEN_SYMBOL_CHARS } from '../internal/token-text.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import { createTestApiKey } from '../store/testing/api-key.js';
import type { Store } from '../store/types.js';
import { createEvmIndexer } from './evm-indexer.js';

const logger = silentLogger();
const tmp = mkdtempSync(join(tmpdir(), 'tq-hostile-text-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

/**
 * The word the name repeats: a character outside the BMP (a surrogate pair in JavaScript), a
 * BEL, a right-to-left override, a tab and a NUL among plain text; exactly 32 bytes of UTF-8.
 */
const NAME_UNIT = '𝔸 Evil\u0007Token\u202e\t\u0000xxxxxxxxxxxx';
const NAME_BYTES = 1 << 20;
/** The unit as it must be shown: BEL, RLO and NUL gone, the tab a space. */
const SHOWN_UNIT = '𝔸 EvilToken xxxxxxxxxxxx';
const SYMBOL = `\u001b[2J\u202eEVIL\u0000\r\n${'S'.repeat(60)}`;

const codePoints = (text: string) => [...text].length;

/** `actual` equals `expected`; a megabyte `actual` fails on its length, without being printed. */
function assertText(actual: unknown, expected: string, what: string): void {
  assert.equal(typeof actual, 'string', what);
  const text = actual as string;
  assert.ok(text.length <= 1000, `${what} is ${text.length} characters long`);
  assert.equal(text, expected, what);
}

describe('a token whose contract answers a 1 MiB name and a symbol with control characters', () => {
  let anvil: AnvilInstance;
  let token: string;
  let store: Store;
  let server: Awaited<ReturnType<typeof startApiServer>>;
  let key: string;
  const controller = new AbortController();
  let running: Promise<void>;

  before(async () => {
    assert.equal(Buffer.byteLength(NAME_UNIT), 32);
    anvil = await startAnvil();
    const [from] = await getAccounts(anvil.url);
    const args = encodeArgs([
      { type: 'bytes32', value: Buffer.from(NAME_UNIT, 'utf8') },
      { type: 'uint256', value: NAME_BYTES },
      { type: 'string', value: SYMBOL },
      { type: 'uint8', value: 18 },
      { type: 'uint256', value: 10n ** 24n },
    ]);
    const receipt = await waitForReceipt(
      anvil.url,
      await sendTransaction(anvil.url, { from: from!, data: HostileTextToken.bytecode + args }),
    );
    token = receipt.contractAddress!;
    await waitForReceipt(
      anvil.url,
      await sendTransaction(anvil.url, {
        from: from!,
        to: token,
        data: encodeCall(selector('transfer(address,uint256)'), [
          { type: 'address', value: '0x00000000000000000000000000000000000000bb' },
          { type: 'uint256', value: 5n },
        ]),
      }),
    );

    store = await openSqliteStore({ path: join(tmp, 'hostile.sqlite'), logger });
    const source = createEvmSource({ rpc: createRpcClient({ url: anvil.url, logger }), logger });
    running = createEvmIndexer({
      chain: { name: 'eth', rpcUrl: anvil.url, fromBlock: 0, finalityDepth: 0, pollIntervalMs: 20 },
      source,
      store: store.writer,
      logger,
      signal: controller.signal,
      tty: false,
      supplyRefreshBlocks: 1,
    }).run();
    running.catch(() => {});
    const head = await getBlockNumber(anvil.url);
    await waitFor('the indexer to reach the head', async () => {
      return (await store.writer.getCheckpoint('eth'))?.block === head;
    });

    key = (await createTestApiKey(store, 't')).key;
    // As `serve` and `start` wire it (src/cli/commands.ts), with no token list configured.
    server = await startApiServer({
      store: withTokenOverlay(store, createTokenOverlay([])),
      logger,
      chains: ['eth'],
      host: '127.0.0.1',
      port: 0,
    });
  });

  after(async () => {
    controller.abort();
    await running?.catch(() => {});
    await server?.close();
    await store?.close();
    await anvil?.stop();
  });

  /** What the name must read: the clean unit repeated, cut to the cap, no trailing space. */
  const expectedName = [...SHOWN_UNIT.repeat(10)].slice(0, MAX_TOKEN_NAME_CHARS).join('').trimEnd();
  const expectedSymbol = `[2JEVIL  ${'S'.repeat(60)}`.slice(0, MAX_TOKEN_SYMBOL_CHARS);

  test('the node really answers the 1 MiB name and the raw symbol', async () => {
    const source = createEvmSource({ rpc: createRpcClient({ url: anvil.url, logger }), logger });
    const answer = (await createRpcClient({ url: anvil.url, logger }).request<string>('eth_call', [
      { to: token, data: `0x${selector('name()')}` },
      'latest',
    ])) as string;
    assert.equal((answer.length - 2) / 2, 64 + NAME_BYTES);
    assert.ok(answer.includes(Buffer.from(NAME_UNIT).toString('hex')));
    // The source's reads are where metadata enters: already capped there.
    const [metadata] = await source.readTokenMetadata([token]);
    assertText(metadata?.name, expectedName, 'the name read');
    assertText(metadata?.symbol, expectedSymbol, 'the symbol read');
  });

  test('the store keeps the name and symbol capped and clean', async () => {
    const stored = await store.reader.getToken('eth', token);
    assert.ok(stored, 'the token is indexed');
    assertText(stored.name, expectedName, 'the stored name');
    assertText(stored.symbol, expectedSymbol, 'the stored symbol');
    assert.ok(codePoints(stored.name) <= MAX_TOKEN_NAME_CHARS);
    assert.ok(codePoints(stored.symbol) <= MAX_TOKEN_SYMBOL_CHARS);
  });

  const get = async (path: string) => {
    const answer = await call(server.url, `${path}?apikey=${key}`);
    assert.ok(answer.text.length < 10_000, `${path} answers ${answer.text.length} characters`);
    return okData(answer);
  };

  test('Token Info serves them capped and clean', async () => {
    const data = (await get(`/vipapi/eth/token/${token}`)) as { tokenInfo: { f: string; s: string } };
    assertText(data.tokenInfo.f, expectedName, 'f');
    assertText(data.tokenInfo.s, expectedSymbol, 's');
  });

  test('Token List on Chain serves them capped and clean', async () => {
    const page = (await get('/vipapi/eth/tokens/1/10')) as { data: { h: string; f: string; s: string }[] };
    const row = page.data.find((t) => t.h === token);
    assertText(row?.f, expectedName, 'f');
    assertText(row?.s, expectedSymbol, 's');
  });

  test('Token Transaction List serves them capped and clean', async () => {
    const records = (await get(`/vipapi/eth/token/tokentrans/${token}/1/10`)) as {
      tokenSymbol: string;
      tokenInfo: { f: string; s: string };
    }[];
    assert.equal(records.length, 2);
    for (const r of records) {
      assertText(r.tokenSymbol, expectedSymbol, 'tokenSymbol');
      assertText(r.tokenInfo.f, expectedName, 'tokenInfo.f');
      assertText(r.tokenInfo.s, expectedSymbol, 'tokenInfo.s');
    }
  });
});
