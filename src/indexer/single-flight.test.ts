import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sleep } from '../internal/async.js';
import { silentLogger } from '../internal/logger.js';
import { createSingleFlight } from './single-flight.js';

describe('single flight', () => {
  test('a kick during a run makes one more run, never two at once', async () => {
    let runs = 0;
    let concurrent = 0;
    let maxConcurrent = 0;
    const flight = createSingleFlight({
      run: async () => {
        concurrent++;
        maxConcurrent = Math.max(maxConcurrent, concurrent);
        runs++;
        await sleep(20);
        concurrent--;
      },
      signal: new AbortController().signal,
      logger: silentLogger(),
      what: 'test',
    });
    flight.kick();
    flight.kick();
    flight.kick();
    await sleep(100);
    assert.equal(runs, 2);
    assert.equal(maxConcurrent, 1);
  });

  test('a failed run is retried on its own after retryMs', async () => {
    let runs = 0;
    const flight = createSingleFlight({
      run: async () => {
        runs++;
        if (runs === 1) throw new Error('node down');
      },
      signal: new AbortController().signal,
      logger: silentLogger(),
      what: 'test',
      retryMs: 20,
    });
    flight.kick();
    await sleep(100);
    assert.equal(runs, 2);
  });

  test('hold waits for the run in flight and starts none until it is done', async () => {
    const events: string[] = [];
    const flight = createSingleFlight({
      run: async () => {
        events.push('run start');
        await sleep(30);
        events.push('run end');
      },
      signal: new AbortController().signal,
      logger: silentLogger(),
      what: 'test',
    });
    flight.kick();
    const held = flight.hold(async () => {
      events.push('held');
      flight.kick(); // remembered, not started
      await sleep(30);
      assert.equal(flight.held, true);
      return 7;
    });
    assert.equal(await held, 7);
    assert.equal(flight.held, false);
    await sleep(50);
    assert.deepEqual(events, ['run start', 'run end', 'held']);
    flight.kick();
    await sleep(50);
    assert.deepEqual(events, ['run start', 'run end', 'held', 'run start', 'run end']);
  });
});
