/**
 * The six smaller service sources: postgres, gotrue (auth), realtime, storage, PostgREST and
 * pgbouncer. Field names follow the real ingest samples; the project sits where sources.ts says
 * (top-level `project`, or `metadata.project` for realtime and storage).
 */
import type { JsonObject } from '../store/shape.ts';
import { makeClients, randomIp, type Client } from './clients.ts';
import { isoSeconds, pgDuration, pgSeconds, pgTimestamp, projectPicker, type RecordMaker } from './common.ts';
import type { DemoProject } from './projects.ts';
import { deepFreeze, Weighted, type Rng } from './random.ts';

const internalIp = (rng: Rng) => `10.0.${rng.int(256)}.${1 + rng.int(254)}`;

// ---------------------------------------------------------------------------------- postgres

type Severity = 'LOG' | 'NOTICE' | 'WARNING' | 'ERROR' | 'FATAL';
const SEVERITY = new Weighted<Severity>([['LOG', 78], ['NOTICE', 2], ['WARNING', 6], ['ERROR', 11], ['FATAL', 3]]);

interface PgLine {
  message: string;
  sqlState: string;
  commandTag: string;
  user: string;
  backend: string;
  extra?: JsonObject;
}

function pgLine(rng: Rng, p: DemoProject, severity: Severity): PgLine {
  const table = rng.pick(p.tables);
  const client = { sqlState: '00000', backend: 'client backend' };
  switch (severity) {
    case 'LOG':
      switch (rng.int(7)) {
        case 0:
          return { ...client, message: `connection received: host=${internalIp(rng)} port=${rng.range(30000, 65000)}`, commandTag: '', user: '', backend: 'not initialized' };
        case 1:
          return { ...client, message: `connection authorized: user=authenticator database=postgres application_name=${rng.pick(['PostgREST 12.2.3', 'Supavisor', 'postgres_exporter'])}`, commandTag: 'authentication', user: 'authenticator' };
        case 2:
          return { ...client, message: `disconnection: session time: ${pgDuration(rng.range(10, 4_000_000))} user=authenticator database=postgres host=${internalIp(rng)} port=${rng.range(30000, 65000)}`, commandTag: 'idle', user: 'authenticator' };
        case 3:
          return { ...client, message: 'checkpoint starting: time', commandTag: '', user: '', backend: 'checkpointer' };
        case 4: {
          const buffers = rng.range(5, 4000);
          return {
            ...client,
            message: `checkpoint complete: wrote ${buffers} buffers (${(buffers / 163.84).toFixed(1)}%); 0 WAL file(s) added, 0 removed, ${rng.int(3)} recycled; write=${(rng.next() * 30).toFixed(3)} s, sync=0.00${rng.int(10)} s, total=${(rng.next() * 30).toFixed(3)} s; sync files=${rng.range(2, 80)}, longest=0.002 s, average=0.001 s; distance=${rng.range(100, 90000)} kB, estimate=${rng.range(100, 90000)} kB`,
            commandTag: '',
            user: '',
            backend: 'checkpointer',
          };
        }
        case 5: {
          // Multi-line, as Postgres writes autovacuum reports.
          const remain = rng.range(100, 90000);
          return {
            ...client,
            message: `automatic vacuum of table "postgres.public.${table}": index scans: ${rng.int(2)}\npages: 0 removed, ${rng.range(10, 9000)} remain, ${rng.range(1, 900)} scanned\ntuples: ${rng.range(1, 2000)} removed, ${remain} remain, 0 are dead but not yet removable`,
            commandTag: '',
            user: '',
            backend: 'autovacuum worker',
          };
        }
        default:
          return { ...client, message: `duration: ${(rng.logNormal(1500, 0.7)).toFixed(3)} ms  statement: select * from public.${table} where created_at > now() - interval '30 days'`, commandTag: 'SELECT', user: 'authenticator' };
      }
    case 'NOTICE':
      return { ...client, message: `relation "${table}" already exists, skipping`, sqlState: '42P07', commandTag: 'CREATE TABLE', user: 'postgres' };
    case 'WARNING':
      return rng.chance(0.7)
        ? { ...client, message: 'PgBouncer auth request: postgres', sqlState: '01000', commandTag: 'SELECT', user: 'pgbouncer', extra: { context: 'PL/pgSQL function pgbouncer.get_auth(text) line 3 at RAISE' } }
        : { ...client, message: 'there is no transaction in progress', sqlState: '25P01', commandTag: 'COMMIT', user: 'postgres' };
    case 'ERROR':
      switch (rng.int(7)) {
        case 0:
          return { ...client, message: `relation "public.${table}s" does not exist`, sqlState: '42P01', commandTag: 'SELECT', user: 'authenticator', extra: { query: `select * from public.${table}s limit 10` } };
        case 1:
          return { ...client, message: `duplicate key value violates unique constraint "${table}_pkey"`, sqlState: '23505', commandTag: 'INSERT', user: 'authenticator', extra: { detail: `Key (id)=(${rng.range(1, 50000)}) already exists.` } };
        case 2:
          return { ...client, message: `permission denied for table ${table}`, sqlState: '42501', commandTag: 'SELECT', user: 'anon' };
        case 3:
          return { ...client, message: `new row violates row-level security policy for table "${table}"`, sqlState: '42501', commandTag: 'INSERT', user: 'authenticated' };
        case 4:
          return { ...client, message: 'canceling statement due to statement timeout', sqlState: '57014', commandTag: 'SELECT', user: 'authenticated' };
        case 5:
          return { ...client, message: 'syntax error at or near "FORM"', sqlState: '42601', commandTag: 'SELECT', user: 'postgres', extra: { query: `select id FORM ${table}` } };
        default:
          return { ...client, message: `column ${table}.totl does not exist`, sqlState: '42703', commandTag: 'SELECT', user: 'authenticator', extra: { hint: `Perhaps you meant to reference the column "${table}.total".` } };
      }
    case 'FATAL':
      switch (rng.int(4)) {
        case 0:
          return { ...client, message: 'password authentication failed for user "postgres"', sqlState: '28P01', commandTag: 'authentication', user: 'postgres' };
        case 1:
          return { ...client, message: 'terminating connection due to administrator command', sqlState: '57P01', commandTag: 'idle', user: 'authenticator' };
        case 2:
          return { ...client, message: 'remaining connection slots are reserved for non-replication superuser connections', sqlState: '53300', commandTag: 'startup', user: 'authenticator' };
        default: {
          const ip = randomIp(rng);
          return { ...client, message: `no pg_hba.conf entry for host "${ip}", user "postgres", database "postgres", SSL off`, sqlState: '28000', commandTag: 'authentication', user: 'postgres' };
        }
      }
  }
}

/** `postgres.logs`: metadata.parsed with Postgres' csvlog fields; error_severity mix mostly LOG. */
export function postgresMaker(rng: Rng): RecordMaker {
  const projects = projectPicker();
  const lineNumbers = new Map<string, number>();
  return (ts) => {
    const p = projects.pick(rng);
    const severity = SEVERITY.pick(rng);
    const line = pgLine(rng, p, severity);
    const pid = rng.range(1000, 60000);
    const sessionId = `${(Math.floor(ts / 1e6) - rng.int(86400)).toString(16)}.${pid.toString(16)}`;
    const lineNum = (lineNumbers.get(p.ref) ?? rng.range(1, 5000)) + 1;
    lineNumbers.set(p.ref, lineNum);
    const parsed: JsonObject = {
      backend_type: line.backend,
      command_tag: line.commandTag,
      connection_from: line.backend === 'client backend' || line.backend === 'not initialized' ? `${internalIp(rng)}:${rng.range(30000, 65000)}` : '',
      database_name: line.user ? 'postgres' : '',
      error_severity: severity,
      leader_pid: 0,
      process_id: pid,
      query_id: 0,
      session_id: sessionId,
      session_line_num: lineNum,
      session_start_time: pgSeconds(ts - rng.int(86_400) * 1_000_000),
      sql_state_code: line.sqlState,
      timestamp: pgTimestamp(ts),
      transaction_id: severity === 'ERROR' ? rng.range(1000, 900000) : 0,
      user_name: line.user,
      virtual_transaction_id: `${rng.range(1, 40)}/${rng.range(1, 90000)}`,
      ...line.extra,
    };
    return {
      id: rng.uuid(),
      timestamp: ts,
      event_message: line.message,
      project: p.ref,
      metadata: { host: `db-${p.ref}`, parsed },
    };
  };
}

// ------------------------------------------------------------------------------------ gotrue

const AUTH_PATHS = new Weighted<readonly [string, string]>([
  [['POST', '/token'], 45],
  [['GET', '/user'], 30],
  [['POST', '/otp'], 5],
  [['POST', '/logout'], 5],
  [['POST', '/signup'], 4],
  [['GET', '/settings'], 4],
  [['GET', '/authorize'], 3],
  [['POST', '/recover'], 2],
  [['GET', '/verify'], 2],
]);
const AUTH_ERRORS = [
  [400, 'Invalid login credentials', 'invalid_credentials'],
  [400, 'Invalid Refresh Token: Refresh Token Not Found', 'refresh_token_not_found'],
  [422, 'User already registered', 'user_already_exists'],
  [429, 'For security purposes, you can only request this after 27 seconds.', 'over_request_rate_limit'],
  [403, 'Email link is invalid or has expired', 'otp_expired'],
] as const;

/**
 * `gotrue.logs.prod`: the event message is GoTrue's JSON log line; metadata holds the same
 * fields parsed, plus host and project (top-level `project` is the one sources.ts reads).
 */
export function gotrueMaker(rng: Rng): RecordMaker {
  const projects = projectPicker();
  const clients = new Map<string, Client[]>(projectPicker().items.map((p) => [p.ref, makeClients(rng, p, 24)]));
  return (ts) => {
    const p = projects.pick(rng);
    const c = rng.pickSkewed(clients.get(p.ref)!);
    const [method, path] = AUTH_PATHS.pick(rng);
    const time = isoSeconds(ts);
    const requestId = rng.uuid();
    const r = rng.next();
    let event: JsonObject;
    if (r < 0.35) {
      event = { component: 'api', level: 'info', method, msg: 'request started', path, referer: c.referer ?? '', remote_addr: c.ip, request_id: requestId, time };
    } else if (r < 0.82) {
      event = { component: 'api', duration: Math.round(rng.logNormal(40_000_000, 0.8)), level: 'info', method, msg: 'request completed', path, referer: c.referer ?? '', remote_addr: c.ip, request_id: requestId, status: path === '/logout' ? 204 : 200, time };
      if (path === '/token') {
        event['auth_event'] = {
          action: rng.chance(0.85) ? 'token_refreshed' : 'login',
          actor_id: c.userId,
          actor_name: '',
          actor_username: c.email,
          actor_via_sso: false,
          log_type: rng.chance(0.85) ? 'token' : 'account',
          traits: { provider: rng.pick(['email', 'google', 'github']) },
        };
      }
    } else if (r < 0.92) {
      const [status, text, code] = rng.pick(AUTH_ERRORS);
      event = { component: 'api', duration: Math.round(rng.logNormal(20_000_000, 0.8)), error: `${status}: ${text}`, error_code: code, level: 'info', method, msg: `${status}: ${text}`, path, referer: c.referer ?? '', remote_addr: c.ip, request_id: requestId, status, time };
    } else if (r < 0.97) {
      event = { component: 'api', instance_id: '00000000-0000-0000-0000-000000000000', level: 'info', login_method: rng.pick(['password', 'pkce', 'otp']), metering: true, msg: 'Login', provider: rng.pick(['email', 'google', 'github']), time, user_id: c.userId };
    } else {
      event = { component: 'api', error: 'failed to connect to `host=localhost user=supabase_auth_admin database=postgres`: server error (FATAL: remaining connection slots are reserved)', level: 'error', method, msg: '500: Database error querying schema', path, remote_addr: c.ip, request_id: requestId, status: 500, time };
    }
    return {
      id: rng.uuid(),
      timestamp: ts,
      event_message: JSON.stringify(event),
      project: p.ref,
      metadata: { ...event, host: `db-${p.ref}`, project: p.ref, timestamp: time },
    };
  };
}

// ---------------------------------------------------------------------------------- realtime

interface RealtimeLine {
  level: 'info' | 'warning' | 'error';
  file: string;
  fn: string;
  line: number;
  module: string;
  message: (ref: string, table: string) => string;
}

const REALTIME_LINES = new Weighted<RealtimeLine>([
  [{ level: 'info', file: 'lib/realtime/tenants/connect.ex', fn: 'handle_continue/2', line: 187, module: 'Elixir.Realtime.Tenants.Connect', message: (ref) => `Connected to tenant ${ref} database` }, 20],
  [{ level: 'info', file: 'lib/realtime/tenants/connect.ex', fn: 'handle_info/2', line: 231, module: 'Elixir.Realtime.Tenants.Connect', message: (ref) => `Stop tenant ${ref} because of no connected users` }, 15],
  [{ level: 'info', file: 'lib/realtime_web/channels/realtime_channel.ex', fn: 'handle_info/2', line: 268, module: 'Elixir.RealtimeWeb.RealtimeChannel', message: (_, table) => `Subscribed to PostgreSQL changes on realtime:public:${table}` }, 35],
  [{ level: 'info', file: 'lib/realtime/monitoring/prom_ex/plugins/tenant.ex', fn: 'execute_tenant_metrics/0', line: 94, module: 'Elixir.Realtime.PromEx.Plugins.Tenant', message: (ref) => `Billing metrics: realtime:${ref}` }, 10],
  [{ level: 'warning', file: 'lib/realtime_web/channels/realtime_channel.ex', fn: 'join/3', line: 121, module: 'Elixir.RealtimeWeb.RealtimeChannel', message: () => 'ChannelRateLimitReached: Too many channels' }, 6],
  [{ level: 'warning', file: 'lib/realtime_web/channels/realtime_channel.ex', fn: 'join/3', line: 98, module: 'Elixir.RealtimeWeb.RealtimeChannel', message: () => 'ClientJoinRateLimitReached: Too many joins per second' }, 4],
  [
    {
      level: 'error',
      file: 'lib/realtime_web/channels/realtime_channel.ex',
      fn: 'handle_info/2',
      line: 293,
      module: 'Elixir.RealtimeWeb.RealtimeChannel',
      message: (_, table) =>
        `Subscribing to PostgreSQL failed: {:error, "Subscription insert failed with 0 rows. Check that tables are part of publication supabase_realtime and subscription params are correct: %{\\"event\\" => \\"INSERT\\", \\"schema\\" => \\"public\\", \\"table\\" => \\"${table}\\"}"}`,
    },
    7,
  ],
  [{ level: 'error', file: 'lib/realtime/tenants/connect.ex', fn: 'handle_continue/2', line: 203, module: 'Elixir.Realtime.Tenants.Connect', message: () => 'UnableToConnectToProject: Realtime was unable to connect to the project database' }, 3],
]);

/** `realtime.logs.prod`: Elixir logger context; project in `metadata.project` (and `external_id`). */
export function realtimeMaker(rng: Rng): RecordMaker {
  const projects = projectPicker();
  const nodes = Array.from({ length: 4 }, () => deepFreeze({ node: `realtime-prod@fdaa:0:cc:a7b:${rng.hex(4)}:${rng.int(10)}:${rng.hex(4)}:2` }));
  return (ts) => {
    const p = projects.pick(rng);
    const l = REALTIME_LINES.pick(rng);
    const [fn = '', arity = ''] = l.fn.split('/');
    return {
      id: rng.uuid(),
      timestamp: ts,
      event_message: l.message(p.ref, rng.pick(p.tables)),
      metadata: {
        context: {
          application: 'realtime',
          domain: ['elixir'],
          file: l.file,
          function: l.fn,
          gl: `<0.${rng.range(1000, 9999)}.0>`,
          line: l.line,
          mfa: [l.module, fn, arity],
          module: l.module,
          pid: `<0.${rng.range(1000, 9999)}.${rng.int(200)}>`,
          time: ts,
          vm: nodes[rng.int(nodes.length)]!,
        },
        external_id: p.ref,
        level: l.level,
        project: p.ref,
      },
    };
  };
}

// ----------------------------------------------------------------------------------- storage

/** `storage.logs.prod.2`: request lines and service messages; project in `metadata.project`. */
export function storageMaker(rng: Rng): RecordMaker {
  const projects = projectPicker();
  const clients = new Map<string, Client[]>(projectPicker().items.map((p) => [p.ref, makeClients(rng, p, 16)]));
  const hosts = new Map<string, readonly string[]>(
    projectPicker().items.map((p) => [p.ref, Array.from({ length: 3 }, () => `ip-10-${rng.int(256)}-${rng.int(256)}-${rng.int(256)}.${p.awsRegion}.compute.internal`)]),
  );
  return (ts) => {
    const p = projects.pick(rng);
    const c = rng.pickSkewed(clients.get(p.ref)!);
    const reqId = `${rng.hex(16)}-${c.colo}`;
    const base = {
      context: { host: rng.pick(hosts.get(p.ref)!), pid: rng.range(1, 8) },
      project: p.ref,
      reqId,
      tenantId: p.ref,
    };
    const bucket = rng.pick(p.buckets);
    const object = `${c.userId}/${rng.range(1000, 9999)}.${rng.pick(['png', 'webp', 'pdf', 'jpg'])}`;
    const r = rng.next();
    let level = 'info';
    let message: string;
    let extra: JsonObject = {};
    if (r < 0.6) {
      const [method, url] = rng.chance(0.7)
        ? ['GET', `/object/public/${bucket}/${object}`]
        : rng.chance(0.5)
          ? ['POST', `/object/${bucket}/${object}`]
          : ['POST', `/object/list/${bucket}`];
      const s = rng.next();
      const status = s < 0.88 ? 200 : s < 0.93 ? 400 : s < 0.985 ? 404 : 500;
      if (status >= 500) level = 'error';
      else if (status >= 400) level = 'warn';
      message = `${method} | ${status} | ${c.ip} | ${reqId} | ${url} | ${c.userAgent}`;
      extra = {
        req: { headers: { host: `${p.ref}.supabase.co`, user_agent: c.userAgent, x_forwarded_proto: 'https' }, hostname: `${p.ref}.supabase.co`, method, url },
        res: { statusCode: status },
        responseTime: Math.round(rng.logNormal(30, 0.9) * 1000) / 1000,
      };
    } else {
      const m = rng.next();
      if (m < 0.5) message = `content-type is ${rng.pick(['image/png', 'image/webp', 'application/pdf', 'text/plain;charset=UTF-8'])}`;
      else if (m < 0.75) message = `Uploaded ${bucket}/${object}`;
      else if (m < 0.9) {
        level = 'warn';
        message = 'Object not found';
      } else {
        level = 'error';
        message = `[Object] Error: The resource was not found\n    at Object.getObject (/app/dist/storage/object.js:${rng.range(40, 400)}:19)`;
      }
    }
    return { id: rng.uuid(), timestamp: ts, event_message: message, metadata: { ...base, level, ...extra } };
  };
}

// --------------------------------------------------------------------------------- PostgREST

const POSTGREST_LINES = new Weighted<(rng: Rng) => string>([
  [() => 'Attempting to connect to the database...', 10],
  [() => 'Connection successful', 10],
  [() => 'Listening on port 3000', 6],
  [() => 'Listening for notifications on the pgrst channel', 6],
  [() => 'Successfully connected to PostgreSQL 15.8 on aarch64-unknown-linux-gnu, compiled by gcc (GCC) 13.2.0, 64-bit', 6],
  [() => 'Config reloaded', 8],
  [() => 'Received a schema cache reload message on the "pgrst" channel', 12],
  [(rng) => `Schema cache queried in ${(rng.logNormal(20, 0.6)).toFixed(1)} milliseconds`, 14],
  [(rng) => `Schema cache loaded ${rng.range(3, 40)} Relations, ${rng.range(2, 60)} Relationships, ${rng.range(1, 30)} Functions, 0 Domain Representations, 4 Media Type Handlers`, 14],
  [() => 'Starting PostgREST 12.2.3...', 4],
  [
    () =>
      '{"code":"PGRST000","details":"connection to server at \\"localhost\\" (::1), port 5432 failed: FATAL:  remaining connection slots are reserved for non-replication superuser connections\\n","hint":null,"message":"Database connection error. Retrying the connection."}',
    6,
  ],
  [(rng) => `${rng.range(1, 40)} Retrying the database connection in ${rng.pick([1, 2, 4, 8, 16, 32])} seconds...`, 4],
]);

/** `postgREST.logs.prod`: PostgREST's own messages; metadata is just the host. */
export function postgrestMaker(rng: Rng): RecordMaker {
  const projects = projectPicker();
  return (ts) => {
    const p = projects.pick(rng);
    return { id: rng.uuid(), timestamp: ts, event_message: POSTGREST_LINES.pick(rng)(rng), project: p.ref, metadata: { host: p.ref } };
  };
}

// --------------------------------------------------------------------------------- pgbouncer

/** `pgbouncer.logs.prod`: connection lifecycle lines and periodic stats. */
export function pgbouncerMaker(rng: Rng): RecordMaker {
  const projects = projectPicker();
  return (ts) => {
    const p = projects.pick(rng);
    const ptr = `0xaaab${rng.hex(8)}`;
    const user = rng.pick(['authenticator', 'postgres', 'supabase_admin', 'supabase_storage_admin']);
    const r = rng.next();
    let message: string;
    if (r < 0.3) message = `S-${ptr}: postgres/${user}@127.0.0.1:5432 new connection to server (from 127.0.0.1:${rng.range(30000, 65000)})`;
    else if (r < 0.55) message = `C-${ptr}: postgres/${user}@${internalIp(rng)}:${rng.range(30000, 65000)} login attempt: db=postgres user=${user} tls=TLSv1.3/TLS_AES_256_GCM_SHA384`;
    else if (r < 0.75) message = `C-${ptr}: postgres/${user}@${internalIp(rng)}:${rng.range(30000, 65000)} closing because: client close request (age=${rng.range(0, 3600)}s)`;
    else if (r < 0.85) message = `S-${ptr}: postgres/${user}@127.0.0.1:5432 closing because: server idle timeout (age=${rng.range(600, 900)}s)`;
    else if (r < 0.98) {
      message = `stats: ${rng.range(0, 200)} xacts/s, ${rng.range(0, 900)} queries/s, 0 client parses/s, 0 server parses/s, 0 binds/s, in ${rng.range(100, 90000)} B/s, out ${rng.range(100, 900000)} B/s, xact ${rng.range(200, 90000)} us, query ${rng.range(100, 9000)} us, wait ${rng.range(0, 900)} us`;
    } else message = `C-${ptr}: (nodb)/(nouser)@${randomIp(rng)}:${rng.range(30000, 65000)} closing because: server login has been failing, try again later (server_login_retry) (age=0s)`;
    return { id: rng.uuid(), timestamp: ts, event_message: message, project: p.ref, metadata: { host: `db-${p.ref}` } };
  };
}
