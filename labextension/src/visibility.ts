/**
 * Polls that rest while the browser tab is hidden.
 *
 * Every open tab of every user polls the server, and the server asks SLURM for what it
 * shows; a tab in the background shows nothing to anyone. So a poll that falls due while the
 * tab is hidden is held, and runs once when the tab is shown again: the user sees the state
 * of now at once, and the controller heard nothing in between.
 */

/** What of `document` this needs (a fake in the node tests). */
export interface IPageVisibility {
  readonly hidden: boolean;
  addEventListener(type: 'visibilitychange', listener: () => void): void;
  removeEventListener(type: 'visibilitychange', listener: () => void): void;
}

/**
 * Wraps a poll: `run()` polls now when the tab is visible, else marks it due; showing the tab
 * runs a due poll once. `dispose()` stops listening.
 */
export class VisiblePoll {
  constructor(page: IPageVisibility, poll: () => void) {
    this._page = page;
    this._poll = poll;
    this._listener = () => {
      if (!this._page.hidden && this._due) {
        this._due = false;
        this._poll();
      }
    };
    page.addEventListener('visibilitychange', this._listener);
  }

  /** Poll now, or when the tab is next shown. True when it polled now. */
  run(): boolean {
    if (this._page.hidden) {
      this._due = true;
      return false;
    }
    this._due = false;
    this._poll();
    return true;
  }

  /** A poll is waiting for the tab to be shown. */
  get due(): boolean {
    return this._due;
  }

  /** Forget a due poll (the poll was stopped or replaced). */
  cancel(): void {
    this._due = false;
  }

  dispose(): void {
    this._page.removeEventListener('visibilitychange', this._listener);
    this._due = false;
  }

  private _page: IPageVisibility;
  private _poll: () => void;
  private _listener: () => void;
  private _due = false;
}
