import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

/**
 * GET a JSON document from the ari-jupyter server extension.
 *
 * Goes through ServerConnection so the token and XSRF handling of the
 * running JupyterLab apply; there are no path parameters on purpose.
 */
export async function requestAPI<T>(endpoint: string): Promise<T> {
  const settings = ServerConnection.makeSettings();
  const url = URLExt.join(settings.baseUrl, 'ari-jupyter', endpoint);
  const response = await ServerConnection.makeRequest(url, {}, settings);
  if (!response.ok) {
    throw new ServerConnection.ResponseError(response);
  }
  return (await response.json()) as T;
}
