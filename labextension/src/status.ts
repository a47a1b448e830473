import { Widget } from '@lumino/widgets';
import { ISignal, Signal } from '@lumino/signaling';

import { requestAPI } from './request';

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
}

const POLL_MS = 30000;

/** Short human text: "SLURM 1234 · 2 nodes n[1-2] · 59:10 left" (squeue's %L). */
export function describe(status: IAllocationStatus): string {
  const a = status.allocation;
  const parts = [`SLURM ${a.job_id ?? '?'}`];
  const nodes = a.num_nodes === 1 ? '1 node' : `${a.num_nodes ?? '?'} nodes`;
  parts.push(a.nodelist ? `${nodes} ${a.nodelist}` : nodes);
  const data = status.time_left?.data;
  if (data?.unlimited) {
    parts.push('no time limit');
  } else if (data?.raw) {
    parts.push(`${data.raw} left`);
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
  constructor() {
    super();
    this.addClass('ari-AllocationStatus');
    this.node.setAttribute('role', 'status');
    this.node.setAttribute('aria-label', 'SLURM allocation');
  }

  /** Emitted when the item starts or stops being relevant. */
  get activeChanged(): ISignal<this, void> {
    return this._activeChanged;
  }

  get isActiveAllocation(): boolean {
    return this._active;
  }

  /** Fetch once now, then every POLL_MS while the page is open. */
  start(): void {
    void this.refresh();
    this._timer = window.setInterval(() => void this.refresh(), POLL_MS);
  }

  async refresh(): Promise<void> {
    let status: IAllocationStatus | null = null;
    try {
      status = await requestAPI<IAllocationStatus>('allocation');
    } catch (reason) {
      console.warn('ari-jupyter: allocation status unavailable', reason);
    }
    if (status && !status.allocation.inside_allocation) {
      // The server's environment never changes: outside stays outside.
      this.stop();
    }
    this.render(status);
  }

  private render(status: IAllocationStatus | null): void {
    const active = !!status?.allocation?.inside_allocation;
    // The core probe warns when the allocation is about to end.
    this.toggleClass('ari-mod-warn', status?.time_left?.status === 'warn');
    if (status && active) {
      this.node.textContent = describe(status);
      this.node.title = [
        `Job ${status.allocation.job_id}`,
        status.allocation.job_name ? `name ${status.allocation.job_name}` : '',
        status.allocation.partition
          ? `partition ${status.allocation.partition}`
          : '',
        status.time_left ? `time left: ${status.time_left.summary}` : ''
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

  private _active = false;
  private _timer: number | undefined;
  private _activeChanged = new Signal<this, void>(this);
}
