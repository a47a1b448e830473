/**
 * The allocation status item's pure helpers: the JSON it reads and the text and tooltip it
 * shows. Nothing here imports JupyterLab, so ../test checks it under node alone.
 */
import { IWords } from './words';

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
  /** The hub's idle timeout, when the site says it: a run in this server's terminal ends with
   * the server. `text` is the server's wording ("90 s", "1 h 30 min"), in the `lang` asked. */
  idle_cull?: { seconds: number; text: string } | null;
}

/** Default poll interval; the refreshInterval setting changes it. */
export const POLL_SECONDS = 30;

/** The poll interval in ms for the refreshInterval setting `seconds` (5 s at least). */
export function pollMs(seconds: number): number {
  return Math.max(5, seconds) * 1000;
}

/**
 * A sentence of the server's catalog for a tooltip, which shows no markup: each `code span`
 * becomes a quoted phrase in the UI language's quotes (“ari run”, 「ari run」).
 */
export function withoutCodeMarks(text: string, trans: IWords): string {
  return text.replace(/( ?)`([^`]+)`( ?)/g, (_, before: string, code: string, after: string) => {
    const quoted = trans.__('“%1”', code);
    // full-width quotes (「」) carry their own spacing: the spaces around the span go
    return /^[\u3000-\u303f\uff00-\uffef]/.test(quoted) ? quoted : before + quoted + after;
  });
}

/**
 * Short human text: "SLURM 1234 · 2 nodes n[1-2] · 59:10 left" (squeue's %L), and
 * "stops after 90 s idle" under a hub that culls idle servers; on a demo site
 * "Demo rccs-cloud · SLURM 1027 · …", the demo first so it is never read as the real one.
 */
export function describe(status: IAllocationStatus, trans: IWords): string {
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
  if (status.idle_cull && !status.demo) {
    parts.push(trans.__('stops after %1 idle', status.idle_cull.text));
  }
  return parts.join(' · ');
}

/** The item's tooltip: a demo site said first, the job, its name and partition when known,
 * the time left. */
export function allocationTitle(status: IAllocationStatus, trans: IWords): string {
  return [
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
      : '',
    status.idle_cull && !status.demo
      ? trans.__(
          'The hub stops this server after %1 without use, and a run started in its terminal ends with it. An open JupyterLab tab counts as use; a closed one does not.',
          status.idle_cull.text
        )
      : ''
  ]
    .filter(Boolean)
    .join('\n');
}
