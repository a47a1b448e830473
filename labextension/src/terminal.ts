import { JupyterFrontEnd } from '@jupyterlab/application';
import { MainAreaWidget } from '@jupyterlab/apputils';
import { PageConfig, PathExt } from '@jupyterlab/coreutils';
import { Terminal, TerminalAPI } from '@jupyterlab/services';
import { ITerminal } from '@jupyterlab/terminal';

import { fetchJSON } from './fetch_json';
import { ITerminalRequest, TerminalRequestError } from './terminal_request';

const PROMPT_WAIT_MS = 2000;
const CONNECT_WAIT_MS = 10000;

/**
 * Resolve the directory for the new shell as an absolute path.
 *
 * jupyter_server resolves a relative terminal cwd against its own process
 * directory before the root dir, so relative paths are anchored to the
 * server root here.
 */
function absoluteCwd(cwd: string | undefined): string | undefined {
  if (cwd === undefined || cwd.startsWith('/')) {
    return cwd;
  }
  const root = PageConfig.getOption('serverRoot');
  if (root.startsWith('/')) {
    // PathExt.join drops the leading slash; the server needs it back.
    return '/' + PathExt.join(root, cwd);
  }
  return cwd;
}

function waitFor(
  ready: () => boolean,
  signal: { connect: (f: () => void) => boolean; disconnect: (f: () => void) => boolean },
  timeoutMs: number
): Promise<boolean> {
  return new Promise(resolve => {
    if (ready()) {
      resolve(true);
      return;
    }
    const done = (result: boolean) => {
      clearTimeout(timer);
      signal.disconnect(check);
      resolve(result);
    };
    const check = () => {
      if (ready()) {
        done(true);
      }
    };
    const timer = setTimeout(() => done(ready()), timeoutMs);
    signal.connect(check);
  });
}

/** The tab of terminal `name` in the main area, if it has one. */
function terminalTab(
  app: JupyterFrontEnd,
  name: string
): MainAreaWidget<ITerminal.ITerminal> | undefined {
  for (const widget of app.shell.widgets('main')) {
    const content = (widget as MainAreaWidget<ITerminal.ITerminal>).content;
    if (content?.session?.name === name) {
      return widget as MainAreaWidget<ITerminal.ITerminal>;
    }
  }
  return undefined;
}

/** The terminal opened for each folder (its session name), typed into again while idle. */
const opened = new Map<string, string>();

/**
 * The terminal opened before for `cwd` when it still runs and its shell waits at its prompt
 * (the server extension looks: words typed into a running `ari run` would be its input);
 * undefined otherwise.
 */
async function idleTerminal(app: JupyterFrontEnd, cwd: string): Promise<string | undefined> {
  const name = opened.get(cwd);
  if (name === undefined) {
    return undefined;
  }
  try {
    const answer = await fetchJSON<{ idle: boolean | null }>([
      'ari-jupyter',
      'terminal-idle',
      encodeURIComponent(name)
    ]);
    if (answer.idle === true) {
      return name;
    }
  } catch {
    // gone (404) or not answered: a new terminal
  }
  opened.delete(cwd);
  return undefined;
}

/**
 * Type `command` into a terminal in `cwd`, pressing Enter only when `run`: the terminal this
 * opened before for that folder while its shell is idle (what was typed at its prompt is
 * cleared first), else a new one.
 *
 * Returns the terminal session name.
 */
export async function openTerminal(
  app: JupyterFrontEnd,
  request: ITerminalRequest
): Promise<string> {
  // A page still restoring its layout (just reloaded) would bring the notebook back to the
  // front over the new terminal, which would then hold the command out of sight.
  await app.restored;
  const cwd = absoluteCwd(request.cwd) ?? '';
  let name = await idleTerminal(app, cwd);
  const reused = name !== undefined;
  if (name === undefined) {
    // Created over REST because `terminal:create-new` strips the leading slash
    // of an absolute cwd; the command then attaches a widget to it by name.
    const model = await TerminalAPI.startNew(
      app.serviceManager.serverSettings,
      undefined,
      cwd || undefined
    );
    name = model.name;
    opened.set(cwd, name);
  }

  // The terminal's tab when it has one, else a tab attached to it by name.
  const widget =
    terminalTab(app, name) ??
    ((await app.commands.execute('terminal:create-new', {
      name
    })) as MainAreaWidget<ITerminal.ITerminal>);
  app.shell.activateById(widget.id);
  await widget.revealed;
  const session: Terminal.ITerminalConnection = widget.content.session;

  const connected = await waitFor(
    () => session.connectionStatus === 'connected',
    {
      connect: f => session.connectionStatusChanged.connect(f),
      disconnect: f => session.connectionStatusChanged.disconnect(f)
    },
    CONNECT_WAIT_MS
  );
  if (!connected) {
    throw new TerminalRequestError(`terminal ${name} did not connect`);
  }
  if (reused) {
    // The shell is at its prompt already; what an earlier click typed there goes first
    // (Ctrl-E then Ctrl-U: readline's end of line, then kill to its start).
    session.send({
      type: 'stdin',
      content: ['\x05\x15' + request.command + (request.run === true ? '\r' : '')]
    });
    widget.activate();
    return name;
  }
  // Typing before the shell printed its prompt can be echoed twice.
  let prompted = false;
  const onMessage = (_: unknown, msg: Terminal.IMessage) => {
    if (msg.type === 'stdout') {
      prompted = true;
    }
  };
  session.messageReceived.connect(onMessage);
  await waitFor(
    () => prompted,
    {
      connect: f => session.messageReceived.connect(f),
      disconnect: f => session.messageReceived.disconnect(f)
    },
    PROMPT_WAIT_MS
  );
  session.messageReceived.disconnect(onMessage);

  session.send({
    type: 'stdin',
    content: [request.command + (request.run === true ? '\r' : '')]
  });
  widget.activate();
  return name;
}
