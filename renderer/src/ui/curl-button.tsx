import { getApiKey, serverOrigin } from '../api/client.ts';
import { curlCommand, curlOf } from '../lib/curl.ts';
import type { EndpointRequest } from '../lib/view-request.ts';
import { CopyButton } from './copy-button.tsx';

/**
 * The request "Copy as curl" copies: the endpoint request behind a view (null until the view has
 * one, a project), or the `/api/logs…` path of the explorer's search.
 */
export type CurlSource = { endpoint: EndpointRequest | null } | { search: string };

/** Copies the request behind the current view as a curl command (with the key). */
export function CurlButton({ source }: { source: CurlSource }) {
  if ('search' in source) {
    return (
      <CopyButton
        label="Copy as curl"
        testId="copy-curl"
        title="Copy this search as a curl command (includes your API key)"
        text={() => curlOf(`${serverOrigin()}${source.search}`, getApiKey() ?? '')}
      />
    );
  }
  const request = source.endpoint;
  if (!request) {
    return (
      <button type="button" className="btn btn--small" disabled>
        Copy as curl
      </button>
    );
  }
  return (
    <CopyButton
      label="Copy as curl"
      testId="copy-curl"
      title="Copy this view's endpoint request as a curl command (includes your API key)"
      text={() => curlCommand(serverOrigin(), request.name, request.params, getApiKey() ?? '')}
    />
  );
}
