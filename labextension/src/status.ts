import { nullTranslator, TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';
import { ISignal, Signal } from '@lumino/signaling';

import { fetchJSON } from './fetch_json';
import { VisiblePoll } from './visibility';
import {
  allocationTitle,
  describe,
  IAllocationStatus,
  POLL_SECONDS,
  pollMs
} from './status_text';

/**
 * Status-bar item with the allocation JupyterLab runs in.
 *
 * Polls the server extension, not while the browser tab is hidden; inactive (hidden) outside
 * an allocation or when the server extension is not enabled.
 */
export class AllocationStatusItem extends Widget {
  /** `lang` answers the language the server words the time left in ('' for English). */
  constructor(
    trans: TranslationBundle = nullTranslator.load('ari_jupyter'),
    lang: () => string = () => ''
  ) {
    super();
    this._trans = trans;
    this._lang = lang;
    this.addClass('ari-AllocationStatus');
    this.node.setAttribute('role', 'status');
    this.node.setAttribute('aria-label', trans.__('SLURM allocation'));
    this._visible = new VisiblePoll(document, () => void this.refresh());
  }

  /** Poll every `seconds` from now on (the refreshInterval setting). */
  setInterval(seconds: number): void {
    this._pollMs = pollMs(seconds);
    if (this._timer !== undefined) {
      this.stop();
      this._timer = window.setInterval(() => this._visible.run(), this._pollMs);
    }
  }

  /** Emitted when the item starts or stops being relevant. */
  get activeChanged(): ISignal<this, void> {
    return this._activeChanged;
  }

  get isActiveAllocation(): boolean {
    return this._active;
  }

  /** Ask the status bar to look at isActive again (a setting changed). */
  notifyActiveChanged(): void {
    this._activeChanged.emit();
  }

  /** Fetch once now, then every refresh interval while the page is open. */
  start(): void {
    void this.refresh();
    this._timer = window.setInterval(() => this._visible.run(), this._pollMs);
  }

  async refresh(): Promise<void> {
    let status: IAllocationStatus | null = null;
    try {
      const lang = this._lang();
      status = await fetchJSON<IAllocationStatus>(['ari-jupyter', 'allocation'], {}, lang ? { lang } : {});
    } catch (reason) {
      console.warn('ari-jupyter: allocation status unavailable', reason);
    }
    if (status && (!status.allocation.inside_allocation || status.demo)) {
      // The server's environment never changes: outside stays outside, a recording stays as it
      // is. Only a wizard's site switch changes the answer, and the wizard says so (comm.ts).
      this.stop();
    }
    this.render(status);
  }

  private render(status: IAllocationStatus | null): void {
    const active = !!status?.allocation?.inside_allocation;
    // The core probe warns when the allocation is about to end.
    this.toggleClass('ari-mod-warn', status?.time_left?.status === 'warn');
    this.toggleClass('ari-mod-demo', !!status?.demo);
    if (status && active) {
      const trans = this._trans;
      this.node.textContent = describe(status, trans);
      this.node.title = allocationTitle(status, trans);
    } else {
      this.node.textContent = '';
      this.node.title = '';
    }
    if (active !== this._active) {
      this._active = active;
      this._activeChanged.emit();
    }
  }

  stop(): void {
    if (this._timer !== undefined) {
      window.clearInterval(this._timer);
      this._timer = undefined;
    }
    this._visible.cancel();
  }

  dispose(): void {
    this.stop();
    this._visible.dispose();
    super.dispose();
  }

  private _trans: TranslationBundle;
  private _lang: () => string;
  private _pollMs = POLL_SECONDS * 1000;
  private _active = false;
  private _timer: number | undefined;
  private _visible: VisiblePoll;
  private _activeChanged = new Signal<this, void>(this);
}
