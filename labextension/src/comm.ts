import { JupyterFrontEnd } from '@jupyterlab/application';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { Kernel, KernelMessage } from '@jupyterlab/services';
import { TranslationBundle } from '@jupyterlab/translation';

import { openTerminal } from './terminal';
import { parseTerminalRequest, TerminalRequestError } from './terminal_request';

/**
 * Frontend half of the "Open in terminal" protocol, version 1.
 *
 * The kernel opens a comm on COMM_TARGET with {"type": HELLO}; we answer
 * READY so the wizard shows its button. Each OPEN_TERMINAL request gets one
 * TERMINAL_OPENED reply carrying the same request_id. Unknown types are
 * ignored (forward compatible). READY also carries `locale`: the language the
 * wizard should speak when its notebook names none ("" = no preference).
 */
export const COMM_TARGET = 'ari_jupyter_terminal';
export const PROTOCOL = 1;
export const HELLO = 'ari-jupyter:hello';
export const READY = 'ari-jupyter:ready';
export const OPEN_TERMINAL = 'ari-jupyter:open-terminal';
export const TERMINAL_OPENED = 'ari-jupyter:terminal-opened';
export const PAGE = 'ari-jupyter:page';
/** The wizard looks at another site (it told the server): the status bar asks again. */
export const SITE_CHANGED = 'ari-jupyter:site-changed';

type Message = { [key: string]: unknown };

/** What the comm needs from the plugin: its strings and the wizard language. */
export interface ICommContext {
  trans: TranslationBundle;
  locale: () => string;
  /** A wizard started or switched sites: what follows its site asks the server again. */
  siteChanged?: () => void;
}

async function handleOpenTerminal(
  app: JupyterFrontEnd,
  context: ICommContext,
  comm: Kernel.IComm,
  data: Message
): Promise<void> {
  const requestId = typeof data.request_id === 'string' ? data.request_id : '';
  let reply: Message;
  try {
    const request = parseTerminalRequest(data);
    const terminal = await openTerminal(app, request);
    reply = { ok: true, terminal };
  } catch (reason) {
    const error =
      reason instanceof TerminalRequestError
        ? reason.message
        : context.trans.__('could not open a terminal: %1', String(reason));
    reply = { ok: false, error };
  }
  if (!comm.isDisposed) {
    comm.send({ type: TERMINAL_OPENED, request_id: requestId, ...reply });
  }
}

function registerOn(
  app: JupyterFrontEnd,
  context: ICommContext,
  kernel: Kernel.IKernelConnection
): void {
  kernel.registerCommTarget(
    COMM_TARGET,
    (comm: Kernel.IComm, open: KernelMessage.ICommOpenMsg) => {
      comm.onMsg = (msg: KernelMessage.ICommMsgMsg) => {
        const data = (msg.content.data ?? {}) as Message;
        if (data.type === OPEN_TERMINAL) {
          return handleOpenTerminal(app, context, comm, data);
        }
        if (data.type === SITE_CHANGED) {
          context.siteChanged?.();
        }
      };
      const hello = (open.content.data ?? {}) as Message;
      if (hello.type === HELLO) {
        comm.send({ type: READY, protocol: PROTOCOL, locale: context.locale() });
        context.siteChanged?.(); // a new wizard has told the server its site
      }
    }
  );
  void wakeBridgesOf(kernel);
}

/**
 * A page loaded while the kernel already runs a wizard (JupyterLab reloaded, F5 or a language
 * change): the kernel's bridge comms still point at the old page, so "Open in terminal" would
 * go nowhere. When the kernel has comms on the target, this page says it is here (PAGE); the
 * kernel opens them anew with a HELLO this page answers. A kernel without any sends nothing.
 */
async function wakeBridgesOf(kernel: Kernel.IKernelConnection): Promise<void> {
  try {
    const reply = await kernel.requestCommInfo({ target_name: COMM_TARGET });
    const content = reply.content as { status: string; comms?: object };
    if (content.status !== 'ok' || Object.keys(content.comms ?? {}).length === 0) {
      return;
    }
    const comm = kernel.createComm(COMM_TARGET);
    comm.open({ type: PAGE, protocol: PROTOCOL }); // the kernel closes it once it has read it
  } catch (reason) {
    console.debug('ari-jupyter: could not reach the wizard in this kernel', reason);
  }
}

/** Register the comm target on the kernel of every notebook, now and later. */
export function registerTerminalComm(
  app: JupyterFrontEnd,
  notebooks: INotebookTracker,
  context: ICommContext
): void {
  const watch = (panel: NotebookPanel) => {
    const register = () => {
      const kernel = panel.sessionContext.session?.kernel;
      if (kernel) {
        registerOn(app, context, kernel);
      }
    };
    panel.sessionContext.kernelChanged.connect(register);
    register();
  };
  notebooks.forEach(watch);
  notebooks.widgetAdded.connect((_, panel) => watch(panel));
}
