import type { ReactNode } from 'react';
import type { TableExport } from '../lib/view-export.ts';
import { CurlButton, type CurlSource } from './curl-button.tsx';
import { ExportButtons } from './export-buttons.tsx';
import { RefreshButton } from './refresh-button.tsx';

/**
 * The actions in a data page's header (Functions, API usage, both Logs views): copy the request
 * behind the view as curl, export what it shows, the page's own actions (`children`), then Refresh.
 */
export function ViewActions({ curl, shown, children }: { curl: CurlSource; shown: TableExport; children?: ReactNode }) {
  return (
    <>
      <CurlButton source={curl} />
      <ExportButtons {...shown} />
      {children}
      <RefreshButton />
    </>
  );
}
