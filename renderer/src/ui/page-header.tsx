import type { ReactNode } from 'react';

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

/** The row of a page's controls under its header; `className` adds the page's own. */
export function Toolbar({ className, children }: { className?: string; children: ReactNode }) {
  return <div className={className ? `toolbar ${className}` : 'toolbar'}>{children}</div>;
}
