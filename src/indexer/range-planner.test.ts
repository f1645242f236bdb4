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

  test('a refusal halves the span and caps later growth, probing above the cap after 16 answers at it', () => {
    const planner = createRangePlanner({ initial: 1000, max: 100_000 });
    planner.refused(1000);
    assert.equal(planner.size, 500);
    for (let i = 0; i < 15; i++) planner.observe(planner.size, 0);
    assert.equal(planner.size, 500);
    planner.observe(planner.size, 0);
    planner.observe(planner.size, 0);
    assert.equal(planner.size, 1000, 'the probe');
  });

  test('a refusal of a span that went through before is not taken as a limit, a second one is', () => {
    const planner = createRangePlanner({ initial: 1000, max: 100_000, targetLogs: 1000 });
    planner.observe(1000, 1000);
    planner.refused(1000); // transient: 1000 blocks went through a moment ago
    assert.equal(planner.size, 500);
    planner.observe(500, 500);
    planner.observe(1000, 1000);
    assert.equal(planner.size, 1000, 'grows back past the refused span');
    planner.refused(1000); // 1000 went through again: still transient
    planner.refused(500); // but refused again before any success: a real limit, capped at 250
    for (let i = 0; i < 15; i++) planner.observe(planner.size, 0);
    assert.equal(planner.size, 250);
  });

  test('never goes below the minimum', () => {
    const planner = createRangePlanner({ initial: 2, min: 1 });
    planner.refused(1);
    planner.refused(1);
    assert.equal(planner.size, 1);
  });
});
