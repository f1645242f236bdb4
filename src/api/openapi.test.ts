/**
 * The OpenAPI document against the running API: it is valid OpenAPI 3.1, lists the 13 Tokenview
 * operations of docs/api.md (written out here, not read from the code), carries the route schemas
 * themselves, and every answer of every operation (success and each documented error, over
 * real data for both families) validates against what the document says for its status and
 * content type. Path-parameter schemas are checked against the handlers both ways.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import Fastify from 'fastify';
import { indexBatch, neoPart, transferRecord, hash32 as txid } from '../store/testing/batches.js';
import type { Store, TransferRecord } from '../store/types.js';
import { tokenPageSchema, tokenSummarySchema, transferListSchema } from './evm-views.js';
import {
  neoAssetSummarySchema,
  neoContractListSchema,
  neoTokenPageSchema,
  neoTokenSummarySchema,
  neoTransferListSchema,
} from './neo-views.js';
import { registerOpenApi } from './openapi.js';
import { STATUS_MAX_AGE_MS } from './routes/health.js';
import { type RouteContext, registerOperation } from './routing.js';
import { ALICE, type ApiFixture, NOSUPPLY, startApiFixture, UNKNOWN, USDC } from './testing/fixture.js';
import { type Answer, call } from './testing/http.js';

/** The operations of docs/api.md#evm-family and docs/api.md#neo-family, in OpenAPI path syntax. */
const SPEC_OPERATIONS = [
  '/vipapi/{chain}/token/{address}',
  '/vipapi/token/totalsupply/{chain}/{address}',
  '/vipapi/token/maxsupply/{chain}/{address}',
  '/vipapi/token/circulatingsupply/{chain}/{address}',
  '/vipapi/{chain}/token/tokentrans/{address}/{page}/{size}',
  '/vipapi/{chain}/tokens/{page}/{size}',
  '/vipapi/neo/token/{address}',
  '/vipapi/token/totalsupply/neo/{address}',
  '/vipapi/token/maxsupply/neo/{address}',
  '/vipapi/neo/token/tokentrans/{address}/{page}/{size}',
  '/vipapi/neo/asset/{address}',
  '/vipapi/tokens/neo/{page}/{size}',
  '/vipapi/contracts/neo/{page}/{size}',
];

/**
 * The address operations and Token Holders of docs/api.md#address-operations and
 * #token-holders: `{address}` is the address asked about, `{token}` the token (Token Holders
 * names its token `{address}`, like the other token operations).
 */
const ADDRESS_OPERATIONS = ['{chain}', 'neo'].flatMap((chain) => [
  `/vipapi/${chain}/address/tokenbalance/{address}`,
  `/vipapi/${chain}/address/tokenbalance/{address}/{token}`,
  `/vipapi/${chain}/address/tokentrans/{address}/{token}/{page}/{size}`,
  `/vipapi/${chain}/address/tokentrans/{address}/{page}/{size}`,
  `/vipapi/${chain}/token/holders/{address}/{page}/{size}`,
]);
const ALL_OPERATIONS = [...SPEC_OPERATIONS, ...ADDRESS_OPERATIONS];

// ---- a small NEO index beside the fixture's EVM data ----

const RPX = '0xecc6b20d3ccac1ee9ef109af5a7cdb85706b1df9';
const GAS = '0x602c79718b16e442de58778e148d0b1084e3b2dffd5de6b7b16cee7969282de7';
const A1 = 'AQVh2pG732YvtNaxEGkQUei3YA4cvo7d2i';
const A2 = 'Abf2qMs1pzQb8kYk9RuxtUb9jtRKJVuBJt';
const FIXED8 = 100_000_000n;

async function seedNeo(store: Store): Promise<void> {
  const transfer = (token: string, block: number, to: string, value: bigint): TransferRecord =>
    transferRecord({
      token,
      blockNumber: block,
      txHash: txid(block),
      from: '',
      to,
      value,
      time: 1_500_000_000 + block * 15,
    });
  await store.writer.applyBatch(
    indexBatch({
      chain: 'neo',
      fromBlock: 1,
      toBlock: 20,
      toBlockHash: txid(0xb10c),
      transfers: [transfer(RPX, 5, A1, 10n * FIXED8)],
      tokens: [
        { address: RPX, name: 'Red Pulse Token', symbol: 'RPX', decimals: 8 },
        { address: GAS, name: 'GAS', symbol: 'GAS', decimals: 8 },
      ],
      pruneBlocksBelow: 21,
      neo: neoPart({
        assetTransfers: [transfer(GAS, 6, A2, 5n * FIXED8)],
        outputsCreated: [
          { txid: txid(6), n: 0, asset: GAS, address: A2, value: 5n * FIXED8, blockNumber: 6 },
        ],
        deployments: [
          {
            hash: RPX,
            blockNumber: 4,
            txIndex: 0,
            txHash: txid(4),
            time: 1_500_000_060,
            kind: 'Contract.Create',
            name: 'Red Pulse',
            author: 'Red Pulse',
            ownerAddress: A1,
          },
        ],
        assets: [
          { asset: GAS, type: 'UtilityToken', registration: { blockNumber: 2, time: 1, registrar: A2 } },
        ],
      }),
    }),
  );
  await store.writer.updateSupplies('neo', [
    { address: RPX, totalSupply: 1000n * FIXED8, cap: null, burnedBalance: null, atBlock: 20 },
    { address: GAS, totalSupply: 5n * FIXED8, cap: 100_000_000n * FIXED8, burnedBalance: null, atBlock: 20 },
  ]);
}

// ---- the document ----

interface Operation {
  operationId: string;
  parameters?: { name: string; in: string; required: boolean; schema: Record<string, unknown> }[];
  security?: Record<string, string[]>[];
  responses: Record<
    string,
    { content?: Record<string, { schema: { oneOf?: Record<string, unknown>[] } & Record<string, unknown> }> }
  >;
}
interface Document {
  openapi: string;
  paths: Record<string, { get?: Operation } & Record<string, unknown>>;
  components: { securitySchemes: Record<string, unknown> };
}

let fx: ApiFixture;
/** The same data on a server that serves no NEO (so NEO operations answer 50001). */
let noNeo: ApiFixture;
let doc: Document;
const ajv = new Ajv2020({ allowUnionTypes: true });

before(async () => {
  fx = await startApiFixture({ chains: ['eth', 'bsc', 'movr', 'neo'] });
  await seedNeo(fx.store);
  noNeo = await startApiFixture({ chains: ['eth'] });
  const answer = await call(fx.url, '/openapi.json');
  assert.equal(answer.status, 200, answer.text);
  doc = JSON.parse(answer.text) as Document;
});
after(async () => {
  await fx.close();
  await noNeo.close();
});

const operation = (path: string): Operation => {
  const op = doc.paths[path]?.get;
  assert.ok(op, `no GET ${path} in the document`);
  return op;
};

describe('the document', () => {
  test('is served without a key, as JSON', async () => {
    const answer = await call(fx.url, '/openapi.json');
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('content-type'), 'application/json; charset=utf-8');
  });

  test('is valid OpenAPI 3.1', async () => {
    assert.equal(doc.openapi, '3.1.0');
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc) as unknown as Record<string, unknown>);
    assert.ok(result.valid, JSON.stringify(result.errors, null, 1));
  });

  test("lists exactly docs/api.md's 13 + 10 operations under /vipapi/, GET only, each with the key", () => {
    const vipapi = Object.keys(doc.paths).filter((p) => p.startsWith('/vipapi/'));
    assert.deepEqual([...vipapi].sort(), [...ALL_OPERATIONS].sort());
    for (const path of ALL_OPERATIONS) {
      assert.deepEqual(Object.keys(doc.paths[path] ?? {}), ['get'], path);
      assert.deepEqual(operation(path).security, [{ apikey: [] }], path);
    }
    assert.equal(new Set(ALL_OPERATIONS.map((p) => operation(p).operationId)).size, 23);
  });

  test('the key is a query parameter named apikey, as the server reads it', () => {
    assert.deepEqual(Object.values(doc.components.securitySchemes), [
      {
        type: 'apiKey',
        in: 'query',
        name: 'apikey',
        description: 'An active key, from `tokenquery keys create`. Only the query parameter counts.',
      },
    ]);
  });

  test('service routes need no key', () => {
    for (const path of ['/healthz', '/status', '/openapi.json']) {
      assert.deepEqual(operation(path).security, [], path);
    }
  });

  test('success bodies are described by the schemas the routes serialize with', () => {
    const routeSchemas: Record<string, unknown> = {
      '/vipapi/{chain}/token/{address}': tokenSummarySchema,
      '/vipapi/{chain}/token/tokentrans/{address}/{page}/{size}': transferListSchema,
      '/vipapi/{chain}/tokens/{page}/{size}': tokenPageSchema,
      '/vipapi/neo/token/{address}': neoTokenSummarySchema,
      '/vipapi/neo/token/tokentrans/{address}/{page}/{size}': neoTransferListSchema,
      '/vipapi/neo/asset/{address}': neoAssetSummarySchema,
      '/vipapi/tokens/neo/{page}/{size}': neoTokenPageSchema,
      '/vipapi/contracts/neo/{page}/{size}': neoContractListSchema,
    };
    for (const [path, schema] of Object.entries(routeSchemas)) {
      const oneOf = operation(path).responses['200']?.content?.['application/json']?.schema.oneOf;
      assert.deepEqual(oneOf?.[0], schema, path);
    }
  });

  test('collecting routes costs requests nothing: no request hook, route schemas untouched', async () => {
    const app = Fastify();
    await registerOpenApi(app, { chains: ['eth'] });
    app.get(
      '/vipapi/:chain/token/:address',
      { schema: { response: { 200: tokenSummarySchema } } },
      async () => ({}),
    );
    await app.ready();
    const hooks = app
      .printRoutes({ includeHooks: true, commonPrefix: false })
      .split('\n')
      .filter((line) => line.includes('•'));
    // Only fastify's own HEAD route hook.
    assert.deepEqual(
      new Set(hooks.map((line) => line.replace(/^[│ ]+/, ''))),
      new Set(['• (onSend) ["headRouteOnSendHandler()"]']),
    );
    await app.close();

    const before = JSON.stringify([tokenSummarySchema, transferListSchema, neoTransferListSchema]);
    const again = await call(noNeo.url, '/openapi.json'); // built afresh by another app
    assert.equal(again.status, 200);
    assert.equal(JSON.stringify([tokenSummarySchema, transferListSchema, neoTransferListSchema]), before);
  });

  test('an operation registered without documentation fails the build of the document', async () => {
    const app = Fastify();
    await registerOpenApi(app, { chains: ['eth'] });
    app.get('/vipapi/:chain/new/:thing', async () => 'x');
    await app.ready();
    assert.throws(() => app.swagger(), /operation \/vipapi\/:chain\/new\/:thing is not documented/);
    await app.close();
  });

  test('registering an operation without its documentation fails at once', () => {
    const app = Fastify();
    // The check comes first: nothing of the context is used.
    const ctx = { pathShapes: [] } as unknown as RouteContext;
    assert.throws(
      () =>
        registerOperation(app, ctx, {
          url: '/vipapi/:chain/new/:thing',
          handler: async (_r, reply) => reply,
        }),
      /operation \/vipapi\/:chain\/new\/:thing is not documented/,
    );
    assert.deepEqual(ctx.pathShapes, []);
  });
});

// ---- every answer against the document ----

/** The document's schema for an answer of `path` (an OpenAPI path) with this status and type. */
function schemaFor(path: string, answer: Answer): Record<string, unknown> {
  const response = operation(path).responses[String(answer.status)];
  assert.ok(response, `${path}: HTTP ${answer.status} is not documented (${answer.text})`);
  const type = (answer.headers.get('content-type') ?? '').split(';')[0]!.trim();
  const media = response.content?.[type];
  assert.ok(media, `${path}: ${type} is not documented for HTTP ${answer.status}`);
  return media.schema;
}

function assertConforms(path: string, answer: Answer): void {
  const schema = schemaFor(path, answer);
  const isJson = answer.headers.get('content-type')?.startsWith('application/json');
  const body: unknown = isJson ? JSON.parse(answer.text) : answer.text;
  const validate = ajv.compile(schema);
  assert.ok(validate(body), `${path} ${answer.status} ${answer.text}: ${ajv.errorsText(validate.errors)}`);
}

const fill = (path: string, values: Record<string, string>): string =>
  path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const value = values[name];
    assert.ok(value !== undefined, `no value for {${name}}`);
    return value;
  });

/** What each answer was, per operation: `http/code` (code 1 for success, `text` for a bare number). */
const seen = new Map<string, Set<string>>();

async function exercise(
  path: string,
  values: Record<string, string>,
  key: string | null = fx.key,
  server: ApiFixture = fx,
) {
  const url = fill(path, values) + (key === null ? '' : `?apikey=${key}`);
  const answer = await call(server.url, url);
  assertConforms(path, answer);
  const kind = answer.headers.get('content-type')?.startsWith('text/plain')
    ? 'text'
    : String((JSON.parse(answer.text) as { code: unknown }).code);
  const kinds = seen.get(path) ?? new Set<string>();
  seen.set(path, kinds);
  kinds.add(`${answer.status}/${kind}`);
  return answer;
}

/** A well-formed address but for its case (fixture addresses are mostly digits). */
const UPPER_CASE = `0x${ALICE.slice(2).toUpperCase()}`;
const EVM_OK = { chain: 'eth', address: USDC, page: '1', size: '10' };
const NEO_OK = { address: RPX, page: '1', size: '10' };

describe('every operation answers as documented', () => {
  for (const path of SPEC_OPERATIONS) {
    const neo = !path.includes('{chain}') && path.includes('neo');
    const ok = neo ? NEO_OK : EVM_OK;
    test(path, async () => {
      await exercise(path, ok);
      await exercise(path, ok, null);
      await exercise(path, ok, 'not-a-key');
      if (path.includes('{chain}')) await exercise(path, { ...ok, chain: 'kcs' });
      else await exercise(path, ok, noNeo.key, noNeo);
      if (path.includes('{address}')) {
        await exercise(path, { ...ok, address: neo ? '0x12' : UPPER_CASE });
        await exercise(path, { ...ok, address: neo ? `0x${'9'.repeat(40)}` : UNKNOWN });
        if (!neo) await exercise(path, { ...ok, address: NOSUPPLY });
        if (neo) await exercise(path, { ...ok, address: GAS.slice(2).toUpperCase() });
      }
      if (path.includes('{page}')) {
        await exercise(path, { ...ok, page: '0' });
        await exercise(path, { ...ok, size: '51' });
        await exercise(path, { ...ok, page: '50', size: '50' });
      }
    });
  }

  for (const path of ADDRESS_OPERATIONS) {
    const neo = !path.includes('{chain}');
    const holders = path.includes('/holders/');
    // Token Holders' {address} is its token.
    const ok: Record<string, string> = neo
      ? { address: holders ? RPX : A1, token: RPX, page: '1', size: '10' }
      : { chain: 'eth', address: holders ? USDC : ALICE, token: USDC, page: '1', size: '10' };
    test(path, async () => {
      await exercise(path, ok);
      await exercise(path, ok, null);
      await exercise(path, ok, 'not-a-key');
      if (neo) await exercise(path, ok, noNeo.key, noNeo);
      else await exercise(path, { ...ok, chain: 'kcs' });
      await exercise(path, { ...ok, address: neo ? '0x12' : UPPER_CASE });
      const unknownToken = neo ? `0x${'9'.repeat(40)}` : UNKNOWN;
      if (holders) await exercise(path, { ...ok, address: unknownToken });
      else await exercise(path, { ...ok, address: neo ? A2 : UNKNOWN });
      if (path.includes('{token}')) {
        await exercise(path, { ...ok, token: unknownToken });
        await exercise(path, { ...ok, token: neo ? GAS.slice(2).toUpperCase() : NOSUPPLY });
      }
      if (path.includes('{page}')) {
        await exercise(path, { ...ok, page: '0' });
        await exercise(path, { ...ok, size: '51' });
        await exercise(path, { ...ok, page: '50', size: '50' });
      }
    });
  }

  test('every documented answer of every operation occurred', () => {
    for (const path of ALL_OPERATIONS) {
      const op = operation(path);
      const expected = new Set<string>(['401/50003']);
      for (const [status, response] of Object.entries(op.responses)) {
        if (status !== '200') continue;
        for (const [type, media] of Object.entries(response.content ?? {})) {
          if (type === 'text/plain') expected.add('200/text');
          for (const branch of media.schema.oneOf ?? []) {
            const code = (branch.properties as { code: { const?: number } }).code.const;
            expected.add(`200/${code ?? 1}`);
          }
        }
      }
      assert.deepEqual([...(seen.get(path) ?? [])].sort(), [...expected].sort(), path);
    }
  });

  test('the service routes answer as documented', async () => {
    for (const path of ['/healthz', '/status', '/openapi.json']) {
      assertConforms(path, await call(fx.url, path));
    }
    // A late start whose holders could not be seeded adds a key to its chain.
    await fx.store.writer.applyBatch(
      indexBatch({
        chain: 'movr',
        fromBlock: 10,
        toBlock: 10,
        seeds: { block: 9, balances: [], partial: true },
      }),
    );
    // Past the age after which `/status` reads the store again.
    await new Promise((resolve) => setTimeout(resolve, STATUS_MAX_AGE_MS + 50));
    const status = await call(fx.url, '/status');
    assert.match(status.text, /"holdersPartial":true/);
    assertConforms('/status', status);
    // The operator's view (with a key) conforms too.
    assertConforms('/status', await call(fx.url, `/status?apikey=${fx.key}`));
  });
});

describe('path parameters: the schemas say what the handlers accept', () => {
  const cases: [
    name: string,
    path: string,
    ok: Record<string, string>,
    accepted: string[],
    refused: string[],
  ][] = [
    [
      'EVM address',
      '/vipapi/{chain}/token/{address}',
      EVM_OK,
      [USDC, UNKNOWN],
      [UPPER_CASE, UPPER_CASE.toUpperCase(), USDC.slice(2), `${USDC}0`, `0x${'g'.repeat(40)}`, 'usdc', ''],
    ],
    [
      'NEO hash',
      '/vipapi/neo/token/{address}',
      NEO_OK,
      [RPX, RPX.slice(2), RPX.toUpperCase(), GAS, `0X${GAS.slice(2).toUpperCase()}`],
      [`${RPX}0`, GAS.slice(0, 60), '0xzz', `0x${'1'.repeat(50)}`],
    ],
    [
      'EVM holder address',
      '/vipapi/{chain}/address/tokenbalance/{address}',
      EVM_OK,
      [ALICE, UNKNOWN],
      [UPPER_CASE, USDC.slice(2), `${USDC}0`, 'alice', ''],
    ],
    [
      'NEO address',
      '/vipapi/neo/address/tokenbalance/{address}',
      NEO_OK,
      [A1, A2],
      [A1.slice(1), `${A1}1`, `B${A1.slice(1)}`, `${A1.slice(0, -1)}0`, RPX, ''],
    ],
    [
      'EVM token',
      '/vipapi/{chain}/address/tokenbalance/{address}/{token}',
      { ...EVM_OK, address: ALICE },
      [USDC, UNKNOWN],
      [UPPER_CASE, USDC.slice(2), 'usdc', ''],
    ],
    [
      'NEO token',
      '/vipapi/neo/address/tokenbalance/{address}/{token}',
      { address: A1 },
      [RPX, RPX.slice(2), GAS.toUpperCase().replace('0X', '0x')],
      [`${RPX}0`, '0xzz', A1],
    ],
    ['page', '/vipapi/{chain}/tokens/{page}/{size}', EVM_OK, ['1', '50'], ['0', '51', '-1', '1.0', 'one']],
    ['size', '/vipapi/{chain}/tokens/{page}/{size}', EVM_OK, ['1', '50'], ['0', '51', '+5', '1e1']],
  ];
  for (const [label, path, ok, accepted, refused] of cases) {
    test(label, async () => {
      const name =
        label === 'page' || label === 'size' ? label : label.endsWith('token') ? 'token' : 'address';
      const parameter = operation(path).parameters?.find((p) => p.name === name);
      assert.ok(parameter, `${path} documents no ${name}`);
      assert.equal(parameter.in, 'path');
      assert.equal(parameter.required, true);
      const validate = ajv.compile(parameter.schema);
      // Path values are text; an integer schema reads them as numbers.
      const typed = (v: string): unknown =>
        parameter.schema.type === 'integer' && /^-?[0-9]+$/.test(v) ? Number(v) : v;
      for (const value of accepted) {
        assert.ok(validate(typed(value)), `${label} ${value}: the schema refuses it`);
        const answer = await exercise(path, { ...ok, [name]: value });
        assert.ok(!answer.text.includes('"code":10001'), `${label} ${value}: the server refuses it`);
      }
      for (const value of refused) {
        assert.ok(!validate(typed(value)), `${label} ${value}: the schema accepts it`);
        if (value === '') continue; // an empty segment is another path
        const answer = await exercise(path, { ...ok, [name]: encodeURIComponent(value) });
        assert.ok(answer.text.includes('"code":10001'), `${label} ${value}: the server accepts it`);
      }
    });
  }

  test('chain: the enum is the EVM family, and the default is a served chain', () => {
    const parameter = operation('/vipapi/{chain}/token/{address}').parameters?.find(
      (p) => p.name === 'chain',
    );
    assert.deepEqual(parameter?.schema.enum, ['eth', 'bsc', 'kcs', 'movr']);
    assert.equal(parameter?.schema.default, 'eth');
  });
});
