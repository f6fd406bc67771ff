import { getApiKey, serverOrigin } from '../api/client.ts';
import { curlCommand } from '../lib/curl.ts';
import type { EndpointRequest } from '../lib/view-request.ts';
import { CopyButton } from './copy-button.tsx';

/** Copies the endpoint request behind the current view as a curl command (with the key). */
export function CurlButton({ request }: { request: EndpointRequest | null }) {
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
