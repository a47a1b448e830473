import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

/**
 * Fetch a JSON answer of the server extension at `baseUrl/<parts...>` (plus `query`).
 *
 * Goes through ServerConnection, so the token and XSRF handling of the running JupyterLab
 * apply. A refusal throws an Error carrying the server's own message (tornado's
 * `{"message": ...}`), else the HTTP status line, and the status as `status`.
 */
export async function fetchJSON<T>(
  parts: string[],
  init: RequestInit = {},
  query: Record<string, string> = {}
): Promise<T> {
  const settings = ServerConnection.makeSettings();
  const search = Object.keys(query).length ? URLExt.objectToQueryString(query) : '';
  const url = URLExt.join(settings.baseUrl, ...parts) + search;
  const response = await ServerConnection.makeRequest(url, init, settings);
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    try {
      const body = await response.json();
      message = body.message || message;
    } catch {
      // not JSON: keep the status line
    }
    throw Object.assign(new Error(message), { status: response.status });
  }
  return (await response.json()) as T;
}
