import { JupyterFrontEnd } from '@jupyterlab/application';
import { MainAreaWidget } from '@jupyterlab/apputils';
import { PageConfig, PathExt } from '@jupyterlab/coreutils';
import { Terminal, TerminalAPI } from '@jupyterlab/services';
import { ITerminal } from '@jupyterlab/terminal';

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

/**
 * Open a terminal in `cwd` and type `command`; press Enter only when `run`.
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
  // Created over REST because `terminal:create-new` strips the leading slash
  // of an absolute cwd; the command then attaches a widget to it by name.
  const model = await TerminalAPI.startNew(
    app.serviceManager.serverSettings,
    undefined,
    absoluteCwd(request.cwd)
  );
  const name = model.name;

  const widget = (await app.commands.execute('terminal:create-new', {
    name
  })) as MainAreaWidget<ITerminal.ITerminal>;
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
