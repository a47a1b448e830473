/**
 * The terminal hand-off's request: what it may type, checked before any terminal is opened.
 * Nothing here imports JupyterLab, so ../test checks it under node alone.
 */

/** What the wizard (or the palette) asks for. */
export interface ITerminalRequest {
  /** The command line typed at the prompt. */
  command: string;
  /** Directory the shell starts in: absolute, or relative to the server root. */
  cwd?: string;
  /** Press Enter after typing. Only `true` (the user clicked "Run") does. */
  run?: boolean;
}

/** Why a request was refused; shown to the user and sent back to the kernel. */
export class TerminalRequestError extends Error {}

// C0 controls and DEL: a newline or carriage return would execute the line,
// escape sequences could drive the terminal. The command must be one line.
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;
const MAX_COMMAND_LENGTH = 4096;

/** Validate an untrusted request (it may come from kernel code). */
export function parseTerminalRequest(data: unknown): ITerminalRequest {
  if (typeof data !== 'object' || data === null) {
    throw new TerminalRequestError('terminal request must be an object');
  }
  const raw = data as Record<string, unknown>;
  const command = raw.command;
  if (typeof command !== 'string' || command.trim() === '') {
    throw new TerminalRequestError('command must be a non-empty string');
  }
  if (command.length > MAX_COMMAND_LENGTH) {
    throw new TerminalRequestError(
      `command is longer than ${MAX_COMMAND_LENGTH} characters`
    );
  }
  if (CONTROL_CHARS.test(command)) {
    throw new TerminalRequestError(
      'command must be a single line without control characters'
    );
  }
  const cwd = raw.cwd;
  if (cwd !== undefined && cwd !== null) {
    if (typeof cwd !== 'string' || CONTROL_CHARS.test(cwd)) {
      throw new TerminalRequestError('cwd must be a path string');
    }
  }
  return {
    command,
    cwd: typeof cwd === 'string' && cwd !== '' ? cwd : undefined,
    // Strictly the boolean true: "run": "false" or 1 never press Enter.
    run: raw.run === true
  };
}
