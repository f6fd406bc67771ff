/**
 * Edge function sources: `deno-relay-logs` (function_edge_logs, one record per invocation,
 * what invocation stats aggregate) and `deno-subhosting-events` (function_logs: boot,
 * shutdown, console output and uncaught exceptions from inside the functions).
 */
import type { JsonObject } from '../store/shape.ts';
import { MICROS } from '../time.ts';
import { makeClients, type Client } from './clients.ts';
import {
  httpDateFormatter,
  isoNanosUtc,
  projectPicker,
  STATUS_CLASS,
  type RecordMaker,
} from './common.ts';
import { versionAt, type DemoFunction, type DemoProject } from './projects.ts';
import { Weighted, type Rng } from './random.ts';

interface FunctionState {
  fn: DemoFunction;
  methods: Weighted<string>;
  pathname: string;
  url: string;
}

interface ProjectState {
  project: DemoProject;
  host: string;
  server: string;
  region: string;
  clients: Client[];
  functions: Weighted<FunctionState>;
}

function projectStates(rng: Rng, clientsPerProject: number): Weighted<ProjectState> {
  return new Weighted(
    projectPicker().items.map((project) => {
      const host = `${project.ref}.supabase.co`;
      const functions = project.functions.map((fn) => {
        const pathname = `/functions/v1/${fn.name}`;
        const state: FunctionState = { fn, methods: new Weighted(fn.methods), pathname, url: `https://${host}${pathname}` };
        return [state, fn.weight] as const;
      });
      const state: ProjectState = {
        project,
        host,
        server: `deno/aws-${project.functionRegion}`,
        region: `aws-${project.functionRegion}`,
        clients: makeClients(rng, project, clientsPerProject),
        functions: new Weighted(functions),
      };
      return [state, project.traffic] as const;
    }),
  );
}

const REDIRECTS = new Weighted([[301, 1], [302, 3], [304, 2]]);
const CLIENT_ERRORS = new Weighted([[400, 30], [401, 25], [403, 8], [404, 15], [405, 5], [409, 4], [422, 8], [429, 5]]);
// 546 is Supabase's "resource limit" (wall clock or memory) for edge functions.
const SERVER_ERRORS = new Weighted([[500, 50], [502, 12], [503, 10], [504, 15], [546, 13]]);

const STRIPE_AGENT = 'Stripe/1.0 (+https://stripe.com/docs/webhooks)';
const CRON_AGENT = 'pg_net/0.10.0';
const WORDS = ['shoe', 'lamp', 'coffee', 'garden', 'blue', 'winter', 'notes', 'travel'];

/** `deno-relay-logs`: project_ref, function_id, execution_time_ms (long tail, ~1% missing), status mix. */
export function functionEdgeMaker(rng: Rng, now: number): RecordMaker {
  const projects = projectStates(rng, 24);
  const httpDate = httpDateFormatter();
  return (ts) => {
    const st = projects.pick(rng);
    const f = st.functions.pick(rng);
    const fn = f.fn;
    const method = f.methods.pick(rng);
    const cls = STATUS_CLASS.pick(rng);
    let status: number;
    if (cls === 2) status = method === 'POST' && rng.chance(0.1) ? 201 : 200;
    else if (cls === 3) status = REDIRECTS.pick(rng);
    else if (cls === 4) status = CLIENT_ERRORS.pick(rng);
    else status = SERVER_ERRORS.pick(rng);

    // Warm runs are log-normal around the function's median; cold starts add a boot of
    // several hundred ms; a few runs hang on a slow upstream until the wall-clock limit.
    let exec: number;
    if (method === 'OPTIONS') exec = 1 + rng.int(4);
    else {
      exec = rng.logNormal(fn.medianMs, 0.85);
      const r = rng.next();
      if (r < 0.005) exec += Math.min(150_000, rng.logNormal(9000, 0.9));
      else if (r < 0.035) exec += rng.logNormal(900, 0.7);
      exec = Math.round(exec);
    }

    let search = '';
    if (method === 'GET') {
      search =
        fn.name === 'og-image'
          ? `?title=${rng.pick(WORDS)}%20${rng.pick(WORDS)}&id=${rng.range(1, 9000)}`
          : rng.chance(0.7)
            ? `?id=${rng.range(1, 9000)}`
            : '';
    }
    const url = f.url + search;
    const c = rng.pickSkewed(st.clients);
    const userAgent = fn.caller === 'webhook' ? STRIPE_AGENT : fn.caller === 'cron' ? CRON_AGENT : c.userAgent;
    const requestHeaders: JsonObject = {
      accept: method === 'OPTIONS' ? '*/*' : 'application/json',
      accept_encoding: 'gzip, deflate, br',
      content_length: method === 'POST' ? String(Math.round(rng.logNormal(350, 1))) : '0',
      host: st.host,
      user_agent: userAgent,
    };
    if (fn.caller === undefined && c.clientInfo !== undefined) requestHeaders['x_client_info'] = c.clientInfo;

    const version = versionAt(fn, (now - ts) / MICROS.day);
    const metadata: JsonObject = {
      deployment_id: `${st.project.ref}_${fn.id}_${version}`,
      function_id: fn.id,
      project_ref: st.project.ref,
      request: {
        headers: requestHeaders,
        host: st.host,
        method,
        pathname: f.pathname,
        protocol: 'https:',
        search,
        url,
      },
      response: {
        headers: {
          content_length: String(method === 'OPTIONS' ? 2 : status >= 400 ? 40 + rng.int(120) : Math.round(rng.logNormal(250, 1))),
          content_type: method === 'OPTIONS' ? 'text/plain;charset=UTF-8' : 'application/json',
          date: httpDate(ts),
          server: st.server,
          vary: 'Accept-Encoding',
        },
        status_code: status,
      },
      version: String(version),
    };
    // About 1% of invocations carry no execution time (the relay lost the timing).
    if (!rng.chance(0.01)) metadata['execution_time_ms'] = exec;

    return {
      id: rng.uuid(),
      timestamp: ts,
      event_message: `${method} | ${status} | ${url}`,
      metadata,
    };
  };
}

type EventType = 'boot' | 'shutdown' | 'log' | 'uncaughtException';
const EVENT_TYPES = new Weighted<EventType>([['log', 85], ['boot', 7], ['shutdown', 6], ['uncaughtException', 2]]);
const LOG_LEVELS = new Weighted([['log', 50], ['info', 20], ['debug', 5], ['warning', 15], ['error', 10]]);

/** What each function prints, by level; `#` is replaced by a number. */
const LINES: Record<string, Partial<Record<string, readonly string[]>>> = {
  'stripe-webhook': {
    log: ['Received event evt_# type=checkout.session.completed', 'Received event evt_# type=invoice.paid', 'Order # marked as paid'],
    error: ['Webhook signature verification failed. No signatures found matching the expected signature for payload.'],
    warning: ['Ignoring event evt_# of type customer.updated'],
  },
  'send-order-email': {
    log: ['Sending order confirmation for order #', 'Email queued with id re_#'],
    error: ['Resend API error: 429 Too Many Requests'],
  },
  'og-image': { log: ['Rendered og image for product # in #ms'], warning: ['Font cache miss, loading Inter-Bold.ttf'] },
  'generate-embeddings': {
    log: ['Embedding # chunks with gte-small', 'Stored # embeddings'],
    error: ['Error: input too long (# tokens)'],
  },
  'push-notifications': {
    log: ['Sending push to # devices', 'FCM response: success=# failure=0'],
    error: ['FCM error: Requested entity was not found.'],
  },
  'openai-summarize': { log: ['Summarizing note # (# tokens)'], error: ['OpenAI error: Rate limit reached for gpt-4o-mini'] },
  'nightly-cleanup': { log: ['Deleted # expired sessions', 'Cleanup finished in #ms'] },
};
const GENERIC: Record<string, readonly string[]> = {
  log: ['Listening on http://localhost:9999/', 'Handling request #', 'Processed # rows'],
  info: ['Request body parsed (# bytes)', 'Cache hit for key user:#'],
  debug: ['env loaded', 'supabase client created'],
  warning: ['Slow upstream response: #ms', 'Retrying fetch (attempt #)'],
  error: ['Error: fetch failed', 'Error: Database query failed: connection timeout'],
};

function fill(rng: Rng, template: string): string {
  return template.replace(/#/g, () => String(rng.range(2, 99999)));
}

/** `deno-subhosting-events`: function_id, event_type, level, execution_id, per-instant ISO timestamp. */
export function functionEventMaker(rng: Rng, now: number): RecordMaker {
  const projects = projectStates(rng, 4);
  const lastExecution = new Map<string, string>();
  return (ts) => {
    const st = projects.pick(rng);
    const fn = st.functions.pick(rng).fn;
    const type = EVENT_TYPES.pick(rng);
    let level: string;
    let message: string;
    if (type === 'boot') {
      level = 'info';
      message = `booted (time: ${rng.range(12, 180)}ms)`;
    } else if (type === 'shutdown') {
      level = 'info';
      message = rng.chance(0.85) ? 'shutdown' : `shutdown (reason: ${rng.pick(['WallClockTime', 'CPUTime', 'Memory', 'EarlyDrop'])})`;
    } else if (type === 'uncaughtException') {
      level = 'error';
      // Multi-line on purpose: stack traces are what CSV exports must quote correctly.
      message =
        `TypeError: Cannot read properties of undefined (reading '${rng.pick(['id', 'data', 'user', 'length'])}')\n` +
        `    at Server.<anonymous> (file:///home/deno/functions/${fn.name}/index.ts:${rng.range(10, 120)}:${rng.range(5, 40)})\n` +
        '    at eventLoopTick (ext:core/01_core.js:168:7)\n';
    } else {
      level = LOG_LEVELS.pick(rng);
      const lines = LINES[fn.name]?.[level] ?? GENERIC[level] ?? GENERIC['log']!;
      message = `${fill(rng, rng.pick(lines))}\n`; // console.log's newline is part of the event
    }
    // Events of one invocation share its execution id; a new id starts a new invocation.
    let execution = lastExecution.get(fn.id);
    if (execution === undefined || type === 'boot' || rng.chance(0.45)) {
      execution = rng.uuid();
      lastExecution.set(fn.id, execution);
    }
    const version = versionAt(fn, (now - ts) / MICROS.day);
    return {
      id: rng.uuid(),
      timestamp: ts,
      event_message: message,
      metadata: {
        deployment_id: `${st.project.ref}_${fn.id}_${version}`,
        event_type: type,
        execution_id: execution,
        function_id: fn.id,
        level,
        project_ref: st.project.ref,
        region: st.region,
        timestamp: isoNanosUtc(ts, rng.int(1000)),
        version: String(version),
      },
    };
  };
}
