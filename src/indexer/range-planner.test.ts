import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createRangePlanner } from './range-planner.js';

describe('range planner', () => {
  test('grows on sparse ranges, at most doubling per step', () => {
    const planner = createRangePlanner({ initial: 100, max: 10_000 });
    planner.observe(100, 0);
    assert.equal(planner.size, 200);
    planner.observe(200, 1);
    assert.equal(planner.size, 400);
  });

  test('shrinks toward the target number of logs on dense ranges', () => {
    const planner = createRangePlanner({ initial: 1000, targetLogs: 1000 });
    planner.observe(1000, 10_000);
    assert.equal(planner.size, 100);
  });

  test('a refusal halves the span and caps all later growth', () => {
    const planner = createRangePlanner({ initial: 1000, max: 100_000 });
    planner.refused(1000);
    assert.equal(planner.size, 500);
    for (let i = 0; i < 20; i++) planner.observe(planner.size, 0);
    assert.equal(planner.size, 500);
  });

  test('never goes below the minimum', () => {
    const planner = createRangePlanner({ initial: 2, min: 1 });
    planner.refused(1);
    planner.refused(1);
    assert.equal(planner.size, 1);
  });
});
