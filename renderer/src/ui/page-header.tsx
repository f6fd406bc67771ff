import type { ReactNode } from 'react';
import type { TableExport } from '../lib/view-export.ts';
import type { EndpointRequest } from '../lib/view-request.ts';
import { ViewActions } from './view-actions.tsx';

export function PageHeader({ title, endpoint, description, actions }: { title: string; endpoint?: string; description?: ReactNode; actions?: ReactNode }) {
  return (
    <header className="page-header">
      <div className="page-header__text">
        <h1>
          {title}
          {endpoint && <code className="page-header__endpoint">{endpoint}</code>}
        </h1>
        {description && <p>{description}</p>}
      </div>
      {actions && <div className="page-header__actions">{actions}</div>}
    </header>
  );
}

/**
 * The header of a page that shows one endpoint (Functions, API usage): its title and endpoint,
 * what it shows, and the view's actions: the endpoint request behind it as curl (`request`, null
 * until there is one), the export of what it shows (`shown`), Refresh.
 */
export function EndpointPageHeader({ title, endpoint, description, request, shown }: { title: string; endpoint: string; description: ReactNode; request: EndpointRequest | null; shown: TableExport }) {
  return <PageHeader title={title} endpoint={endpoint} description={description} actions={<ViewActions curl={{ endpoint: request }} shown={shown} />} />;
}

/** The row of a page's controls under its header; `className` adds the page's own. */
export function Toolbar({ className, children }: { className?: string; children: ReactNode }) {
  return <div className={className ? `toolbar ${className}` : 'toolbar'}>{children}</div>;
}
