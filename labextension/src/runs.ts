import { Dialog, Notification, showDialog } from '@jupyterlab/apputils';
import { ISignal, Signal } from '@lumino/signaling';
import { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';

import { fetchJSON } from './fetch_json';
import { VisiblePoll } from './visibility';
import { bundle } from './i18n';
import { IFinding, IJob, IRunStatus, IRunsList, SCHEDULER_CUT } from './payloads';
import {
  IGroupView,
  IListView,
  INoteView,
  IRowView,
  jobLine,
  jobsCutText,
  jobStateView,
  listView,
  logHeading,
  noLogText,
  phaseHistoryView,
  recordedView,
  shownJobs
} from './runs_view';
import {
  activeRun,
  bestText,
  breakableId,
  breakablePath,
  cancellable,
  codePieces,
  isOutsideEnvelope,
  jobCountsKnown,
  jobToCancel,
  newestNewRun,
  nextDelay,
  phaseText,
  pollDelay,
  POLL_FIRST_MS,
  runPhaseText,
  runPhaseTitle,
  severityText,
  WATCH_MS,
  wizardNotebookName,
  wizardSource,
  workspacesText
} from './runs_text';

/** An answer of the runs endpoints; `lang` asks for the sentences in that language. */
function runsAPI<T>(path: string, init: RequestInit = {}, lang = ''): Promise<T> {
  return fetchJSON<T>(['ari-jupyter', 'runs', path], init, lang ? { lang } : {});
}

/** A sentence with its `code spans` as <code> elements (a command reads, and copies, as one). */
function withCode(text: string): (Node | string)[] {
  return codePieces(text).map(piece => (piece.code ? el('code', {}, piece.text) : piece.text));
}

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === 'class') {
      node.className = value;
    } else {
      node.setAttribute(key, value);
    }
  }
  for (const child of children) {
    node.append(child);
  }
  return node;
}

function phaseBadge(trans: TranslationBundle, phase: string): HTMLElement {
  return el('span', { class: `ari-RunPhase ari-mod-${phase}`, 'data-phase': phase }, phaseText(trans, phase));
}

const NOTE_CLASS: Record<INoteView['kind'], string> = {
  legend: 'ari-RunsPanel-note ari-RunsPanel-legend',
  jobsnote: 'ari-RunsPanel-note ari-RunsPanel-jobsnote',
  jobserror: 'ari-RunsPanel-error ari-RunsPanel-jobsnote'
};

function listNote(note: INoteView): HTMLElement {
  return el('p', { class: NOTE_CLASS[note.kind] }, note.text);
}

/**
 * Opens a notebook with `source` named `name` in `folder` (a contents path; null: wherever the
 * lab would put a new one); `reuse`: the run's notebook again when it is there.
 */
export type NotebookOpener = (
  source: string,
  name: string,
  folder: string | null,
  reuse: boolean
) => Promise<unknown>;

/**
 * The Runs side panel: the workspace's runs, one run's live status, its jobs with Cancel.
 *
 * It reads the server extension's authenticated endpoints, never a kernel: a poll is one
 * fetch plus a small DOM update, so neither the kernel nor the UI waits on it.
 */
export class RunsPanel extends Widget {
  /**
   * `lang` answers the UI language the server renders findings, the process and notes in
   * (`en`, `ja` or `zh`; '' for English).
   */
  constructor(
    openNotebook: NotebookOpener,
    trans: TranslationBundle = bundle(null),
    lang: () => string = () => ''
  ) {
    super();
    this._openNotebook = openNotebook;
    this._trans = trans;
    this._lang = lang;
    // neither the run nor the watch polls while the browser tab is hidden
    this._visiblePoll = new VisiblePoll(document, () => void this.poll());
    this._visibleWatch = new VisiblePoll(document, () => void this.watch());
    this.id = 'ari-jupyter-runs';
    this.addClass('ari-RunsPanel');
    this.title.caption = trans.__('ARI runs');
    this.node.setAttribute('role', 'region');
    this.node.setAttribute('aria-label', trans.__('ARI runs'));
  }

  /**
   * Speak another language (the wizard language setting changed): the panel's own strings
   * from `trans`, the server's sentences in `lang()`, the view shown rendered again.
   */
  setTranslation(trans: TranslationBundle): void {
    this._trans = trans;
    this.title.caption = trans.__('ARI runs');
    this.node.setAttribute('aria-label', trans.__('ARI runs'));
    if (this._selected) {
      this.cancelTimer();
      this._last = ''; // render the run again even if its status did not change
      this._delay = POLL_FIRST_MS;
      void this.poll();
    } else if (this.node.childElementCount) {
      void this.refreshList(); // nothing is rendered before the panel is first shown
    }
  }

  /** The run shown in detail changed phase (or none is shown): for the status bar. */
  get activeRunChanged(): ISignal<this, IRunStatus | null> {
    return this._activeRunChanged;
  }

  protected onAfterShow(): void {
    if (!this._selected) {
      void this.refreshList();
    } else {
      // shown again: the run as it is now, not as it was at the last look
      this._delay = POLL_FIRST_MS;
      void this.poll();
    }
  }

  dispose(): void {
    this.cancelTimer();
    window.clearTimeout(this._watchTimer);
    this._visiblePoll.dispose();
    this._visibleWatch.dispose();
    super.dispose();
  }

  /** At start-up: follow the newest active run, so the status bar shows its phase at once. */
  async startup(): Promise<void> {
    const selections = this._selections;
    void this.watch();
    const list = await this.refreshList();
    const active = list ? activeRun(list.runs) : undefined;
    if (active && this._selections === selections) {  // unless the user opened a run meanwhile
      await this.select(active.run_id);
    }
  }

  /**
   * List the runs and show them, unless another list or a run was asked for meanwhile: a late
   * answer never replaces what the user chose since. Resolves null when nothing could be listed.
   */
  async refreshList(): Promise<IRunsList | null> {
    this.cancelTimer();
    this._pinned = false; // the list again: a run written from now on is shown
    this._selected = null;
    this._last = '';
    const request = ++this._request;
    let list: IRunsList;
    try {
      list = await runsAPI<IRunsList>('', {}, this._lang());
    } catch (reason) {
      if (request === this._request) {
        const said = this._trans.__('The runs could not be listed: %1', String(reason));
        // 404: the endpoints are not there at all, the server extension is not enabled
        const hint = (reason as { status?: number } | null)?.status === 404
          ? ' ' + this._trans.__('The ari-jupyter server extension is not enabled here: run `jupyter server extension enable ari_jupyter.server` and restart JupyterLab.')
          : '';
        this.renderError(said + hint);
      }
      return null;
    }
    if (request === this._request) {
      this.renderList(list);
    }
    return list;
  }

  async select(runId: string): Promise<void> {
    this.cancelTimer();
    ++this._request;
    ++this._selections;
    this._selected = runId;
    this._last = '';
    this._delay = POLL_FIRST_MS;
    await this.poll();
  }

  /**
   * Watch for a new run (the wizard's Write, `ari-jupyter emit` in a terminal): it becomes the
   * run shown, and so the status bar's, unless the user opened a run themselves; that one stays.
   */
  private async watch(): Promise<void> {
    try {
      const { run_ids: ids } = await runsAPI<{ run_ids: string[] }>('ids');
      const fresh = newestNewRun(this._known, ids);
      this._known = new Set(ids);
      if (fresh && !this._pinned && !this.isDisposed) {
        await this.select(fresh);
      }
    } catch (reason) {
      // the list and the run's view say what is wrong; the watch tries again
    }
    if (!this.isDisposed) {
      this._watchTimer = window.setTimeout(() => this._visibleWatch.run(), WATCH_MS);
    }
  }

  private schedule(ms: number): void {
    this.cancelTimer();
    this._timer = window.setTimeout(() => this._visiblePoll.run(), ms);
  }

  private cancelTimer(): void {
    if (this._timer !== undefined) {
      window.clearTimeout(this._timer);
      this._timer = undefined;
    }
    this._visiblePoll.cancel();
  }

  private async poll(): Promise<void> {
    const runId = this._selected;
    if (!runId) {
      return;
    }
    let status: IRunStatus;
    try {
      status = await runsAPI<IRunStatus>(encodeURIComponent(runId), {}, this._lang());
    } catch (reason) {
      if (this._selected === runId) {
        this.renderError(this._trans.__('Run %1: %2', runId, String(reason)));
        this._delay = nextDelay(this._delay, false);
        this.schedule(this._delay);
      }
      return;
    }
    if (this._selected !== runId) {
      return; // the user moved on while the request was out
    }
    const text = JSON.stringify(status);
    const changed = text !== this._last;
    this._last = text;
    if (changed) {
      this.renderStatus(status);
      this._activeRunChanged.emit(status);
    }
    // Also while the panel is hidden: the status bar shows this run's phase. A run that is
    // not active is looked at too: it starts (the hand-off) or starts again (`ari resume`).
    this._delay = pollDelay(this._delay, changed, status.phase, status.active);
    this.schedule(this._delay);
    this.node.dataset.polling = status.active ? 'yes' : 'waiting';
  }

  private header(...actions: HTMLElement[]): HTMLElement {
    return el('div', { class: 'ari-RunsPanel-header' }, el('h2', {}, this._trans.__('ARI runs')), ...actions);
  }

  private button(label: string, onClick: () => void, cls = ''): HTMLButtonElement {
    const b = el('button', { class: `jp-mod-styled ari-RunsPanel-button ${cls}`, type: 'button' }, label);
    b.addEventListener('click', onClick);
    return b;
  }

  private renderError(message: string): void {
    this.node.replaceChildren(
      this.header(this.button(this._trans.__('Refresh'), () => void this.refreshList())),
      el('p', { class: 'ari-RunsPanel-error', role: 'alert' }, message)
    );
  }

  private renderList(list: IRunsList): void {
    const view = listView(this._trans, list);
    // runs written to another workspace (step 4's Workspace field) are listed too, each under
    // its workspace; one that is not on this machine (the server lists it last) is marked
    const body: HTMLElement[] = [
      this.header(this.button(this._trans.__('Refresh'), () => void this.refreshList())),
      el('p', { class: 'ari-RunsPanel-workspace' }, workspacesText(this._trans, list))
    ];
    if (list.skipped_text) {
      // entries of the workspace this user cannot read (another user's run): left out, said once
      body.push(el('p', { class: 'ari-RunsPanel-skipped' }, list.skipped_text));
    }
    if (view.table) {
      body.push(this.runsTable(view));
    }
    if (view.empty) {
      body.push(el('p', {}, view.empty));
    }
    body.push(...view.notes.map(listNote));
    this.node.replaceChildren(...body);
    this.node.dataset.view = 'list';
    delete this.node.dataset.runId;
  }

  /** The run list's table: one body, or (several workspaces) a body per workspace. */
  private runsTable(view: IListView): HTMLElement {
    const trans = this._trans;
    const bodies = view.groups
      ? view.groups.map(group => this.groupBody(group))
      : [el('tbody', {}, ...view.rows.map(row => this.runRow(row)))];
    return el(
      'table',
      { class: 'ari-RunsPanel-table' },
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          el('th', {}, trans.__('Run')),
          // the legend of the d/f/r/t cells is the header's tooltip: a narrow panel keeps one line
          el('th', { title: trans.__('done/failed/running/total') }, trans.__('Search nodes')),
          el('th', {}, trans.__('Best')),
          el('th', { title: trans.__('The run’s SLURM jobs in the queue') }, trans.__('Jobs'))
        )
      ),
      ...bodies
    );
  }

  /** A workspace's group, headed by its path (and, unless it is the default one, a button
   * that forgets it): not one wall of runs from everywhere. */
  private groupBody(group: IGroupView): HTMLElement {
    const trans = this._trans;
    const head = el('th', { colspan: '4', scope: 'rowgroup' },
      el('span', { class: 'ari-RunsPanel-groupname' }, ...breakablePath(group.name)),
      ' ',
      el('span', { class: 'ari-RunsPanel-groupcount' }, group.count));
    if (group.forgettable) {
      const forget = this.button(trans.__('Forget'), () => void this.forget(group.workspace),
        'ari-RunsPanel-forget');
      forget.title = trans.__('Stop listing this workspace here (its runs stay on disk)');
      head.append(' ', forget);
    }
    return el('tbody', { class: 'ari-RunsPanel-group', 'data-workspace': group.workspace },
      el('tr', { class: 'ari-RunsPanel-grouphead' }, head),
      ...group.rows.map(row => this.runRow(row)));
  }

  /** A run's row; a click or Enter opens the run. */
  private runRow(row: IRowView): HTMLElement {
    const run = row.run;
    const tr = el(
      'tr',
      { class: 'ari-RunsPanel-row', 'data-run-id': run.run_id, 'data-workspace': run.workspace, tabindex: '0' },
      // four columns fit the default side panel: the phase sits above the run's title
      el(
        'td',
        { class: 'ari-RunsPanel-title', title: run.checkpoint_dir },
        phaseBadge(this._trans, run.phase),
        el('div', {}, ...breakableId(row.label)),
        // "2026-12-01 10:00": the day and the time each unbroken, a line between them if need be
        ...(row.started
          ? [el('div', { class: 'ari-RunsPanel-started' },
            ...row.started.split(' ').flatMap((part, i) => [...(i ? [' '] : []), el('span', {}, part)]))]
          : [])
      ),
      el('td', { title: this._trans.__('done/failed/running/total') }, row.nodes),
      // and the best metric's node is its tooltip (the run's own view shows it)
      // a metric name breaks after its '_' (triad_ / mbps), never inside a word (triad_mb / ps)
      el('td', { class: 'ari-RunsPanel-best', title: row.bestTitle }, ...breakableId(row.best)),
      // without squeue's answer no count is known: '?' (as the run's own view says unknown),
      // never 0; its tooltip and the note under the table say why
      row.jobsTitle === null ? el('td', {}, row.jobs) : el('td', { title: row.jobsTitle }, row.jobs)
    );
    const open = () => {
      this._pinned = true; // the user's choice: a run written later does not replace it
      void this.select(run.run_id);
    };
    tr.addEventListener('click', open);
    tr.addEventListener('keydown', event => {
      if (event.key === 'Enter') {
        open();
      }
    });
    return tr;
  }

  /** Forget a recorded workspace (the server keeps its checkpoints), then list again. */
  private async forget(workspace: string): Promise<void> {
    try {
      await runsAPI<{ forgotten: boolean }>('forget', {
        method: 'POST',
        body: JSON.stringify({ workspace })
      });
    } catch (reason) {
      console.warn('ari-jupyter: could not forget', workspace, reason);
    }
    await this.refreshList();
  }

  private renderStatus(status: IRunStatus): void {
    const trans = this._trans;
    const s = status;
    const facts = el(
      'dl',
      { class: 'ari-RunsPanel-facts' },
      el('dt', {}, trans.__('Phase')),
      el('dd', {}, phaseBadge(trans, s.phase), s.stage ? ` ${s.stage}` : ''),
      el('dt', {}, trans.__('Search nodes')),
      el(
        'dd',
        { 'data-field': 'nodes' },
        trans.__('%1 total: %2 done, %3 failed, %4 running', s.nodes.total, s.nodes.done, s.nodes.failed, s.nodes.running)
      ),
      el('dt', {}, trans.__('Best')),
      el('dd', { 'data-field': 'best' }, ...breakableId(bestText(s.best_metric))),
      el('dt', {}, 'ARI'),
      el('dd', {}, s.process)
    );
    const findings = s.findings.length
      ? el(
          'ul',
          { class: 'ari-RunsPanel-findings' },
          ...s.findings.map(f =>
            el(
              'li',
              { class: `ari-mod-${f.severity}`, 'data-rule': f.rule },
              el('strong', {}, `${severityText(trans, f.severity)}: `),
              ...withCode(f.message),
              f.fix ? el('div', { class: 'ari-RunsPanel-fix' }, ...withCode(trans.__('Fix: %1', f.fix))) : '',
              this.findingCancel(s, f)
            )
          )
        )
      : el('span', {});
    const jobs = this.renderJobs(s);
    const actions = el('div', { class: 'ari-RunsPanel-actions' });
    if (s.wizard) {
      actions.append(
        this.button(trans.__('Reopen in the wizard'), () => void this.openWizard(s, false)),
        this.button(trans.__('Clone as a new run'), () => void this.openWizard(s, true))
      );
    }
    // no log yet: a sentence, not an empty box
    const log = s.log_tail.length
      ? el('pre', { class: 'ari-RunsPanel-log', 'aria-label': trans.__('log tail') }, s.log_tail.join('\n'))
      : el('p', { class: 'ari-RunsPanel-note ari-RunsPanel-nolog' }, noLogText(trans, s));
    this.node.replaceChildren(
      this.header(this.button(trans.__('All runs'), () => void this.refreshList())),
      el('h3', { class: 'ari-RunsPanel-title', title: s.checkpoint_dir }, ...breakableId(s.title || s.run_id)),
      el('p', { class: 'ari-RunsPanel-runid' }, ...breakableId(s.run_id)),
      facts,
      this.renderHistory(s),
      ...s.notes.map(n => el('p', { class: 'ari-RunsPanel-note' }, n)),
      findings,
      jobs,
      // the follow-up allocations: this allocation → the next, each with its state
      ...(s.chain
        ? [el('div', { class: 'ari-RunsPanel-chain' }, ...s.chain.said.map(line => el('p', { class: 'ari-RunsPanel-note' }, line)))]
        : []),
      this.renderCost(s),
      actions,
      el('h4', {}, logHeading(trans, s.log_file)),
      log
    );
    log.scrollTop = log.scrollHeight;
    this.node.dataset.view = 'status';
    this.node.dataset.phase = s.phase;
    this.node.dataset.runId = s.run_id; // which run the view shows (scripts and tests read it)
  }

  /** The cancel a finding offers (a job outside the approved envelope), or nothing. */
  private findingCancel(s: IRunStatus, f: IFinding): HTMLElement | string {
    const job = jobToCancel(f, s.jobs.jobs);
    return job
      ? this.button(this._trans.__('Cancel job %1', job.job_id), () => void this.cancel(s, [job]), 'ari-mod-cancel')
      : '';
  }

  /** When the run entered each phase (read from its files by the server), each with how long
   * it lasted. */
  private renderHistory(s: IRunStatus): HTMLElement {
    const rows = phaseHistoryView(this._trans, s.phase_history ?? [], s.active, new Date());
    if (!rows.length) {
      return el('span', {});
    }
    return el(
      'section',
      { class: 'ari-RunsPanel-history' },
      el('h4', {}, this._trans.__('Phase history')),
      el(
        'ol',
        { class: 'ari-RunsPanel-phases' },
        ...rows.flatMap(row => [
          // the day on a line of its own where it changes: each phase's line stays short
          ...(row.day ? [el('li', { class: 'ari-RunsPanel-day' }, row.day)] : []),
          el(
            'li',
            { class: 'ari-RunsPanel-phase', 'data-phase': row.phase, title: row.title },
            el('time', { datetime: row.iso }, row.at),
            phaseBadge(this._trans, row.phase),
            el('span', { class: 'ari-RunsPanel-lasted' }, row.lasted)
          )
        ])
      )
    );
  }

  /** Node-hours used per job kind and ARI's LLM use per phase and model (a small section). */
  private renderCost(s: IRunStatus): HTMLElement {
    if (!s.cost || !s.cost.text.length) {
      return el('span', {});
    }
    return el(
      'section',
      { class: 'ari-RunsPanel-cost' },
      el('h4', {}, this._trans.__('Cost so far')),
      ...s.cost.text.map(line => el('p', { class: 'ari-RunsPanel-note' }, line))
    );
  }

  private renderJobs(s: IRunStatus): HTMLElement {
    const trans = this._trans;
    const box = el('section', { class: 'ari-RunsPanel-jobs' }, el('h4', {}, trans.__('SLURM jobs')));
    const jobs = shownJobs(s.jobs);
    if (s.jobs.scheduler === 'absent') {
      box.append(el('p', {}, trans.__('No SLURM on this machine.')));
    } else if (s.jobs.scheduler === 'error') {
      box.append(el('p', { class: 'ari-RunsPanel-error' }, s.jobs.problem));
    } else if (s.jobs.scheduler === SCHEDULER_CUT) {
      box.append(el('p', { class: 'ari-RunsPanel-note ari-RunsPanel-jobscut' }, jobsCutText(trans, s.jobs.problem)));
    } else if (!jobs.length) {
      box.append(el('p', {}, trans.__('None of this run’s jobs is in the queue.')));
    }
    if (!jobCountsKnown(s.jobs.scheduler) && !jobs.length) {
      return box;
    }
    const active = jobs.filter(cancellable);
    for (const job of jobs) {
      const shownState = jobStateView(trans, job, s.jobs.scheduler);
      const item = el(
        'div',
        { class: 'ari-RunsPanel-job', 'data-job-id': job.job_id, 'data-state': job.state },
        el(
          'div',
          shownState.title ? { title: shownState.title } : {},
          el('strong', {}, `${job.job_id} ${job.name}`),
          ' ' + jobLine(trans, job, s.jobs.scheduler)
        )
      );
      const recorded = recordedView(trans, job, s.ledger);
      if (recorded) {
        item.dataset.source = job.source ?? '';
        if (recorded.forgotten) {
          item.append(el('div', { class: 'ari-RunsPanel-forgotten ari-RunsPanel-note' }, recorded.forgotten));
        }
        item.append(
          el(
            'div',
            { class: 'ari-RunsPanel-recorded' },
            recorded.requestLabel,
            ...recorded.request.flatMap((part, i) => [i ? ' · ' : ' ', el('span', {}, part)])
          ),
          el('div', { class: 'ari-RunsPanel-handle' }, recorded.handle)
        );
      }
      if (job.pending_text) {  // why it waits, when it may start, what to do about it
        item.append(el('div', { class: 'ari-RunsPanel-pending ari-RunsPanel-note' }, ...withCode(job.pending_text)));
      }
      if (job.source === 'sacct' && job.exit_code) {  // how it ended, from SLURM's accounting
        item.append(el('div', { class: 'ari-RunsPanel-exit ari-RunsPanel-note' }, trans.__('Exit code %1 (SLURM accounting)', job.exit_code)));
      }
      if (job.cancelled_text) {  // who cancelled it: the checkpoint's cancel record
        item.append(el('div', { class: 'ari-RunsPanel-cancelledby ari-RunsPanel-note' }, ...withCode(job.cancelled_text)));
      }
      if (isOutsideEnvelope(job)) {
        item.dataset.outside = 'yes';
        item.append(
          el('div', { class: 'ari-RunsPanel-outside ari-mod-error' },
            trans.__('Outside what you approved: %1', job.outside_text ?? ''))
        );
      }
      if (cancellable(job)) {
        item.append(this.button(trans.__('Cancel'), () => void this.cancel(s, [job]), 'ari-mod-cancel'));
      }
      if (job.tail.length) {
        item.append(el('pre', { class: 'ari-RunsPanel-jobtail' }, job.tail.slice(-10).join('\n')));
      }
      box.append(item);
    }
    if (active.length > 1) {
      box.append(this.button(trans.__('Cancel all %1 jobs', active.length), () => void this.cancel(s, active), 'ari-mod-cancel'));
    }
    if (s.jobs.accounting === 'no') {
      box.append(el('p', { class: 'ari-RunsPanel-note' }, trans.__('No SLURM accounting here: finished jobs are not listed.')));
    }
    return box;
  }

  private async cancel(s: IRunStatus, jobs: IJob[]): Promise<void> {
    const trans = this._trans;
    const names = jobs.map(j => `${j.job_id} (${j.name}, ${j.state})`).join(', ');
    const result = await showDialog({
      title: trans.__('Cancel SLURM jobs?'),
      body: trans.__('scancel %1 of run %2. The job stops now; ARI sees it fail.', names, s.run_id),
      buttons: [
        Dialog.cancelButton({ label: trans.__('Keep running') }),
        Dialog.warnButton({ label: trans.__('Cancel jobs') })
      ]
    });
    if (!result.button.accept) {
      return;
    }
    try {
      const answer = await runsAPI<{
        outcomes: { job_id: string; result: string; message: string }[];
        status: IRunStatus;
      }>(`${encodeURIComponent(s.run_id)}/cancel`, {
        method: 'POST',
        body: JSON.stringify({ job_ids: jobs.map(j => j.job_id) })
      }, this._lang());
      for (const outcome of answer.outcomes) {
        const notify = ['cancelled', 'gone', 'recording'].includes(outcome.result)
          ? Notification.info
          : Notification.error;
        notify(`ARI: ${outcome.message}`, { autoClose: 5000 });
      }
      if (this._selected === s.run_id) {
        this._last = JSON.stringify(answer.status);
        this.renderStatus(answer.status);
        this._activeRunChanged.emit(answer.status);
      }
    } catch (reason) {
      Notification.error(this._trans.__('ARI: cancel failed: %1', String(reason)));
    }
  }

  private async openWizard(s: IRunStatus, clone: boolean): Promise<void> {
    try {
      await this._openNotebook(
        wizardSource(s.checkpoint_dir, clone),
        wizardNotebookName(s.run_id, clone),
        s.lab_folder ?? null,
        !clone // a clone is a new run each time: a notebook of its own
      );
    } catch (reason) {
      Notification.error(this._trans.__('ARI: could not open the wizard: %1', String(reason)));
    }
  }

  private _openNotebook: NotebookOpener;
  private _trans: TranslationBundle;
  private _lang: () => string;
  private _selected: string | null = null;
  private _request = 0; // every list or run asked for: only the latest is rendered
  private _selections = 0;
  private _pinned = false; // the run shown is one the user opened
  private _known: Set<string> | null = null; // the run ids the watch has seen
  private _watchTimer: number | undefined;
  private _last = '';
  private _delay = POLL_FIRST_MS;
  private _timer: number | undefined;
  private _visiblePoll: VisiblePoll;
  private _visibleWatch: VisiblePoll;
  private _activeRunChanged = new Signal<this, IRunStatus | null>(this);
}

/** Status-bar item: the phase of the run the Runs panel follows, beside the allocation. */
export class RunPhaseStatusItem extends Widget {
  constructor(trans: TranslationBundle = bundle(null)) {
    super();
    this._trans = trans;
    this.addClass('ari-RunPhaseStatus');
    this.node.setAttribute('role', 'status');
    this.node.setAttribute('aria-label', trans.__('ARI run phase'));
  }

  get activeChanged(): ISignal<this, void> {
    return this._changed;
  }

  get hasRun(): boolean {
    return this._run !== null;
  }

  /** Speak another language (the Runs panel's, which follows the wizard language setting). */
  setTranslation(trans: TranslationBundle): void {
    this._trans = trans;
    this.node.setAttribute('aria-label', trans.__('ARI run phase'));
    this.setRun(this._run);
  }

  setRun(run: IRunStatus | null): void {
    this._run = run;
    this.node.textContent = run ? runPhaseText(this._trans, run) : '';
    this.node.title = run ? runPhaseTitle(run) : '';
    this.node.dataset.phase = run?.phase ?? '';
    this._changed.emit();
  }

  private _run: IRunStatus | null = null;
  private _trans: TranslationBundle;
  private _changed = new Signal<this, void>(this);
}
