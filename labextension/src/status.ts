import { nullTranslator, TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';
import { ISignal, Signal } from '@lumino/signaling';

import { fetchJSON } from './fetch_json';

/** The part of GET /ari-jupyter/allocation the status item shows. */
export interface IAllocationStatus {
  allocation: {
    inside_allocation: boolean;
    job_id: string | null;
    job_name?: string | null;
    nodelist: string | null;
    num_nodes: number | null;
    partition?: string | null;
  };
  time_left: {
    status: string;
    summary: string;
    data?: { raw?: string | null; seconds?: number | null; unlimited?: boolean };
  } | null;
  /** Set on a demo site: the allocation is the site's recording, not this server's. */
  demo?: { site: string } | null;
}

/**
 * A sentence of the server's catalog for a tooltip, which shows no markup: each `code span`
 * becomes a quoted phrase in the UI language's quotes (“ari run”, 「ari run」).
 */
export function withoutCodeMarks(
  text: string,
  trans: TranslationBundle = nullTranslator.load('ari_jupyter')
): string {
  return text.replace(/( ?)`([^`]+)`( ?)/g, (_, before: string, code: string, after: string) => {
    const quoted = trans.__('“%1”', code);
    // full-width quotes (「」) carry their own spacing: the spaces around the span go
    return /^[\u3000-\u303f\uff00-\uffef]/.test(quoted) ? quoted : before + quoted + after;
  });
}

/** Default poll interval; the refreshInterval setting changes it. */
export const POLL_SECONDS = 30;

/**
 * Short human text: "SLURM 1234 · 2 nodes n[1-2] · 59:10 left" (squeue's %L); on a demo site
 * "Demo rccs-cloud · SLURM 1027 · …", the demo first so it is never read as the real one.
 */
export function describe(
  status: IAllocationStatus,
  trans: TranslationBundle = nullTranslator.load('ari_jupyter')
): string {
  const a = status.allocation;
  const parts = status.demo ? [trans.__('Demo %1', status.demo.site)] : [];
  parts.push(`SLURM ${a.job_id ?? '?'}`);
  const nodes = trans._n('%1 node', '%1 nodes', a.num_nodes ?? 0);
  const shown = a.num_nodes === null ? trans.__('? nodes') : nodes;
  parts.push(a.nodelist ? `${shown} ${a.nodelist}` : shown);
  const data = status.time_left?.data;
  if (data?.unlimited) {
    parts.push(trans.__('no time limit'));
  } else if (data?.raw) {
    parts.push(trans.__('%1 left', data.raw));
  }
  return parts.join(' · ');
}

/**
 * Status-bar item with the allocation JupyterLab runs in.
 *
 * Polls the server extension; inactive (hidden) outside an allocation or
 * when the server extension is not enabled.
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
  }

  /** Poll every `seconds` from now on (the refreshInterval setting). */
  setInterval(seconds: number): void {
    this._pollMs = Math.max(5, seconds) * 1000;
    if (this._timer !== undefined) {
      this.stop();
      this._timer = window.setInterval(() => void this.refresh(), this._pollMs);
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
    this._timer = window.setInterval(() => void this.refresh(), this._pollMs);
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
      // The server's environment never changes: outside stays outside, a recording stays as it is.
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
      this.node.title = [
        status.demo
          ? trans.__("Demo site %1: its recorded allocation, not the one this server runs in", status.demo.site)
          : '',
        trans.__('Job %1', status.allocation.job_id ?? ''),
        status.allocation.job_name
          ? trans.__('name %1', status.allocation.job_name)
          : '',
        status.allocation.partition
          ? trans.__('partition %1', status.allocation.partition)
          : '',
        status.time_left
          ? trans.__('time left: %1', withoutCodeMarks(status.time_left.summary, trans))
          : ''
      ]
        .filter(Boolean)
        .join('\n');
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
  }

  dispose(): void {
    this.stop();
    super.dispose();
  }

  private _trans: TranslationBundle;
  private _lang: () => string;
  private _pollMs = POLL_SECONDS * 1000;
  private _active = false;
  private _timer: number | undefined;
  private _activeChanged = new Signal<this, void>(this);
}
