import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { IPageVisibility, VisiblePoll } from '../src/visibility';

/** A page whose tab the test hides and shows. */
class FakePage implements IPageVisibility {
  hidden = false;
  listeners = new Set<() => void>();
  addEventListener(_type: 'visibilitychange', listener: () => void): void {
    this.listeners.add(listener);
  }
  removeEventListener(_type: 'visibilitychange', listener: () => void): void {
    this.listeners.delete(listener);
  }
  set(hidden: boolean): void {
    this.hidden = hidden;
    for (const listener of [...this.listeners]) {
      listener();
    }
  }
}

describe('a poll rests while the tab is hidden', () => {
  test('a visible tab polls at once', () => {
    const page = new FakePage();
    let polls = 0;
    const poll = new VisiblePoll(page, () => polls++);
    assert.equal(poll.run(), true);
    assert.equal(polls, 1);
  });

  test('a hidden tab does not poll, however often the poll falls due; shown, it polls once', () => {
    const page = new FakePage();
    let polls = 0;
    const poll = new VisiblePoll(page, () => polls++);
    page.set(true);
    for (let i = 0; i < 10; i++) {
      assert.equal(poll.run(), false);
    }
    assert.equal(polls, 0);
    assert.equal(poll.due, true);
    page.set(false);
    assert.equal(polls, 1);
    assert.equal(poll.due, false);
    page.set(true);
    page.set(false);
    assert.equal(polls, 1, 'showing the tab again polls only when a poll fell due');
  });

  test('a cancelled or disposed poll does not run when the tab is shown', () => {
    const page = new FakePage();
    let polls = 0;
    const cancelled = new VisiblePoll(page, () => polls++);
    const disposed = new VisiblePoll(page, () => polls++);
    page.set(true);
    cancelled.run();
    disposed.run();
    cancelled.cancel();
    disposed.dispose();
    page.set(false);
    assert.equal(polls, 0);
    assert.equal(page.listeners.size, 1, 'a disposed poll stops listening');
  });
});
