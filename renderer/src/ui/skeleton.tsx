/** Loading placeholders shaped like what is coming, so the layout does not jump. */
export function Skeleton({ width, height = 14, className = '' }: { width?: number | string; height?: number | string; className?: string }) {
  return <span className={`skeleton ${className}`} style={{ width, height }} aria-hidden="true" />;
}

export function StatsSkeleton({ count = 4 }: { count?: number }) {
  return (
    <div className="stats" aria-busy="true" data-testid="loading">
      {Array.from({ length: count }, (_, i) => (
        <div className="stat" key={i}>
          <Skeleton width="55%" height={11} />
          <Skeleton width="70%" height={24} className="skeleton--mt" />
          <Skeleton width="40%" height={10} className="skeleton--mt" />
        </div>
      ))}
    </div>
  );
}

export function ChartSkeleton({ height = 240 }: { height?: number }) {
  return (
    <div className="card">
      <div className="card__head">
        <Skeleton width={160} height={13} />
      </div>
      <div className="chart-skeleton" style={{ height }} aria-busy="true">
        {Array.from({ length: 28 }, (_, i) => (
          <span key={i} style={{ height: `${20 + ((i * 37) % 70)}%` }} />
        ))}
      </div>
    </div>
  );
}

export function TableSkeleton({ rows = 12 }: { rows?: number }) {
  return (
    <div className="table-skeleton" aria-busy="true" data-testid="loading">
      {Array.from({ length: rows }, (_, i) => (
        <div key={i} className="table-skeleton__row">
          <Skeleton width={150} />
          <Skeleton width={40} />
          <Skeleton width={50} />
          <Skeleton width={`${30 + ((i * 13) % 40)}%`} />
        </div>
      ))}
    </div>
  );
}

/** Lines of text standing in for a card's table while it loads (`widths`: one per line). */
export function LinesSkeleton({ widths }: { widths: ReadonlyArray<number | string> }) {
  return (
    <div className="pad">
      {widths.map((width, i) => (
        <Skeleton key={i} width={width} height={18} className={i > 0 ? 'skeleton--mt' : undefined} />
      ))}
    </div>
  );
}
