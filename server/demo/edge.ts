/**
 * `cloudflare.logs.prod` (edge_logs): one record per HTTP request through the project's API
 * gateway. Paths cover the four API families the usage counts look for (/rest, /auth,
 * /storage, /realtime), paths of none (/functions, /graphql, /pg-meta, bot probes) and a few
 * that contain two family strings, which count in both families.
 *
 * Built for speed (a million records are generated in ~2 s): per-client `cf` objects are built
 * once and shared, and the metadata's JSON text is assembled alongside the objects from
 * pre-serialized pieces (see PreSerializedRecord), so exporting never re-stringifies 1.7 KB a record.
 */
import type { JsonObject } from '../store/shape.ts';
import { makeClients, type Client } from './clients.ts';
import { anonKey, httpDateFormatter, PreSerializedRecord, projectPicker, STATUS_CLASS, type RecordMaker } from './common.ts';
import type { DemoFunction, DemoProject } from './projects.ts';
import { deepFreeze, hex8, Weighted, type Rng } from './random.ts';

type Kind = 'rest' | 'rpc' | 'auth' | 'storage' | 'realtime' | 'functions' | 'graphql' | 'pgmeta' | 'probe' | 'double';

const KINDS = new Weighted<Kind>([
  ['rest', 46],
  ['rpc', 6],
  ['auth', 14],
  ['storage', 12],
  ['realtime', 5],
  ['functions', 8],
  ['graphql', 3],
  ['pgmeta', 2],
  ['probe', 2],
  ['double', 2],
]);

const CLIENT_ERRORS: Record<Kind, Weighted<number>> = {
  rest: new Weighted([[400, 25], [401, 25], [403, 10], [404, 25], [406, 5], [409, 8], [416, 2]]),
  rpc: new Weighted([[400, 40], [401, 20], [404, 30], [409, 10]]),
  auth: new Weighted([[400, 45], [401, 15], [403, 10], [422, 20], [429, 10]]),
  storage: new Weighted([[400, 30], [403, 20], [404, 45], [413, 5]]),
  realtime: new Weighted([[400, 20], [403, 60], [429, 20]]),
  functions: new Weighted([[400, 30], [401, 30], [404, 30], [405, 10]]),
  graphql: new Weighted([[400, 60], [401, 40]]),
  pgmeta: new Weighted([[401, 1]]),
  probe: new Weighted([[404, 1]]),
  double: new Weighted([[400, 30], [401, 30], [404, 40]]),
};
const SERVER_ERRORS = new Weighted([[500, 35], [502, 20], [503, 20], [504, 15], [520, 5], [522, 5]]);
const FUNCTION_SERVER_ERRORS = new Weighted([[500, 40], [502, 15], [503, 10], [504, 25], [546, 10]]);

const JSON_TYPE = 'application/json; charset=utf-8';
const WORDS = ['shoe', 'lamp', 'coffee', 'garden', 'blue', 'winter', 'notes', 'travel', 'desk', 'mango'];
const IMAGE_TYPES: ReadonlyArray<readonly [string, string]> = [
  ['webp', 'image/webp'],
  ['png', 'image/png'],
  ['jpg', 'image/jpeg'],
  ['avif', 'image/avif'],
];
const PG_META = [
  ['GET', '/pg-meta/default/tables', '?included_schemas=public&include_columns=true'],
  ['GET', '/pg-meta/default/policies', ''],
  ['POST', '/pg-meta/default/query', '?key=table-columns'],
  ['GET', '/pg-meta/default/types', '?included_schemas=public'],
] as const;
const PROBES = ['/', '/favicon.ico', '/robots.txt', '/.env', '/wp-login.php'] as const;

/** A client plus the constant parts of its request-headers JSON, serialized once. */
interface EdgeClient {
  client: Client;
  cfJson: string;
  /** From after `accept` up to the opening quote of `cf_ray`'s value. */
  headersMid: string;
  /** From the closing quote of `cf_ray`'s value to the optional `prefer`. */
  headersTail: string;
  /** The IP and user agent as they appear inside a JSON string. */
  ipEscaped: string;
  userAgentEscaped: string;
}

function edgeClient(client: Client, host: string): EdgeClient {
  const q = JSON.stringify;
  return {
    client,
    cfJson: q(client.cf),
    headersMid: `,"cf_connecting_ip":${q(client.ip)},"cf_ipcountry":${q(client.country)},"cf_ray":"`,
    headersTail:
      `","host":${q(host)},"user_agent":${q(client.userAgent)},"x_forwarded_proto":"https","x_real_ip":${q(client.ip)}` +
      (client.clientInfo === undefined ? '' : `,"x_client_info":${q(client.clientInfo)}`) +
      (client.referer === undefined ? '' : `,"referer":${q(client.referer)}`),
    ipEscaped: q(client.ip).slice(1, -1),
    userAgentEscaped: q(client.userAgent).slice(1, -1),
  };
}

/** Object.freeze typed for JsonObject literals (their children are frozen before). */
function frozen(o: JsonObject): JsonObject {
  return Object.freeze(o);
}

/** Quotes a JSON string, memoized: for the small vocabularies (methods, content types...). */
function memoQuote(): (s: string) => string {
  const cache = new Map<string, string>();
  return (s) => {
    let q = cache.get(s);
    if (q === undefined) {
      q = JSON.stringify(s);
      cache.set(s, q);
    }
    return q;
  };
}

interface ProjectState {
  project: DemoProject;
  host: string;
  hostJson: string;
  base: string;
  clients: EdgeClient[];
  anonKey: string;
  functions: Weighted<DemoFunction>;
}

export function edgeMaker(rng: Rng): RecordMaker {
  const states = new Weighted<ProjectState>(
    projectPicker().items.map((project) => [
      {
        project,
        host: `${project.ref}.supabase.co`,
        hostJson: JSON.stringify(`${project.ref}.supabase.co`),
        base: `https://${project.ref}.supabase.co`,
        clients: makeClients(rng, project, 48).map((c) => edgeClient(c, `${project.ref}.supabase.co`)),
        anonKey: anonKey(project, rng),
        functions: new Weighted(project.functions.map((f) => [f, f.weight] as const)),
      },
      project.traffic,
    ]),
  );
  const workers = Array.from({ length: 12 }, () => {
    const value = deepFreeze({ worker_id: rng.chars(6, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789') });
    return { value, json: JSON.stringify(value) };
  });
  const q = memoQuote();
  const httpDate = httpDateFormatter();

  // The route being built; module-level scratch instead of a result object per record.
  let method = 'GET';
  let path = '';
  let search = '';
  let status = 200;
  let contentType = JSON_TYPE;
  let contentLength = 0;
  let cacheStatus = 'DYNAMIC';
  let accept = 'application/json';
  let originMedian = 25;

  const imageFile = (st: ProjectState, c: Client): string => {
    const [ext, type] = IMAGE_TYPES[rng.int(IMAGE_TYPES.length)]!;
    contentType = type;
    const r = rng.int(3);
    if (r === 0) return `${c.userId}/avatar.${ext}`;
    if (r === 1) return `${st.project.tables[0]}/${rng.range(1, 9000)}/${rng.pick(WORDS)}-${rng.int(12)}.${ext}`;
    return `${rng.range(2023, 2026)}/${rng.range(1, 12)}/${hex8(rng.u32())}.${ext}`;
  };

  const restSearch = (table: string, c: Client): string => {
    switch (rng.int(8)) {
      case 0:
        return '?select=*';
      case 1:
        return '?select=id,name,created_at&order=created_at.desc&limit=20';
      case 2:
        return `?select=*&id=eq.${rng.range(1, 50000)}`;
      case 3:
        return `?select=*,profiles(username,avatar_url)&limit=50&offset=${50 * rng.int(20)}`;
      case 4:
        return `?user_id=eq.${c.userId}&select=*`;
      case 5:
        return `?select=%2A&name=ilike.%25${rng.pick(WORDS)}%25&limit=10`;
      case 6:
        return `?or=(status.eq.open,status.eq.pending)&select=id,status&${table}_id=not.is.null`;
      default:
        return `?select=id,title&order=id.asc&limit=100&offset=${100 * rng.int(50)}`;
    }
  };

  /** Sets method, path, search and the 2xx status for one request of `kind`. */
  const route = (kind: Kind, st: ProjectState, c: Client, cls: number): void => {
    contentType = JSON_TYPE;
    cacheStatus = 'DYNAMIC';
    accept = c.kind === 'server' ? '*/*' : 'application/json';
    status = 200;
    search = '';
    const p = st.project;
    switch (kind) {
      case 'rest': {
        const table = rng.pickSkewed(p.tables);
        path = `/rest/v1/${table}`;
        originMedian = 18;
        const r = rng.next();
        if (r < 0.74) {
          method = 'GET';
          search = restSearch(table, c);
          contentLength = Math.round(rng.logNormal(1800, 1.1));
          if (r < 0.1) accept = 'application/vnd.pgrst.object+json';
        } else if (r < 0.86) {
          method = 'POST';
          status = 201;
          search = rng.chance(0.5) ? '?select=*' : rng.chance(0.5) ? '?on_conflict=id' : '';
          contentLength = search ? Math.round(rng.logNormal(400, 0.6)) : 0;
        } else if (r < 0.92) {
          method = 'PATCH';
          search = `?id=eq.${rng.range(1, 50000)}`;
          status = 204;
        } else if (r < 0.95) {
          method = 'DELETE';
          search = `?id=eq.${rng.range(1, 50000)}`;
          status = 204;
        } else if (r < 0.98) {
          method = 'OPTIONS';
          search = restSearch(table, c);
          contentLength = 0;
        } else {
          method = 'HEAD';
          search = '?select=*';
          contentLength = 0;
        }
        return;
      }
      case 'rpc':
        method = 'POST';
        path = `/rest/v1/rpc/${rng.pickSkewed(p.rpcs)}`;
        contentLength = Math.round(rng.logNormal(600, 1));
        originMedian = 40;
        return;
      case 'auth': {
        originMedian = 70;
        contentLength = Math.round(rng.logNormal(900, 0.3));
        if (cls === 3) {
          method = 'GET';
          if (rng.chance(0.5)) {
            path = '/auth/v1/authorize';
            search = `?provider=${rng.pick(['github', 'google', 'apple'])}&redirect_to=https%3A%2F%2F${p.name}.app%2Fauth%2Fcallback`;
          } else {
            path = '/auth/v1/callback';
            search = `?code=${rng.hex(20)}&state=${rng.hex(24)}`;
          }
          return;
        }
        const r = rng.next();
        if (r < 0.5) {
          method = 'POST';
          path = '/auth/v1/token';
          search = r < 0.4 ? '?grant_type=refresh_token' : r < 0.47 ? '?grant_type=password' : '?grant_type=pkce';
        } else if (r < 0.8) {
          method = r < 0.78 ? 'GET' : 'PUT';
          path = '/auth/v1/user';
          contentLength = Math.round(rng.logNormal(700, 0.2));
        } else if (r < 0.85) {
          method = 'POST';
          path = '/auth/v1/otp';
          contentLength = 2;
        } else if (r < 0.89) {
          method = 'POST';
          path = '/auth/v1/logout';
          search = rng.chance(0.5) ? '?scope=local' : '';
          status = 204;
        } else if (r < 0.93) {
          method = 'GET';
          path = '/auth/v1/settings';
          originMedian = 8;
        } else if (r < 0.97) {
          method = 'POST';
          path = '/auth/v1/signup';
        } else if (r < 0.99) {
          method = 'POST';
          path = '/auth/v1/recover';
          contentLength = 2;
        } else {
          method = 'GET';
          path = '/auth/v1/verify';
          search = `?token=${rng.hex(56)}&type=${rng.pick(['signup', 'recovery', 'magiclink'])}&redirect_to=https://${p.name}.app/welcome`;
          status = 303;
        }
        return;
      }
      case 'storage': {
        const bucket = rng.pickSkewed(p.buckets);
        originMedian = 35;
        accept = c.kind === 'browser' ? 'image/avif,image/webp,image/apng,image/*,*/*;q=0.8' : '*/*';
        const r = rng.next();
        if (r < 0.55) {
          method = 'GET';
          path = `/storage/v1/object/public/${bucket}/${imageFile(st, c)}`;
          contentLength = Math.round(rng.logNormal(60000, 1));
          const h = rng.next();
          cacheStatus = h < 0.6 ? 'HIT' : h < 0.9 ? 'MISS' : h < 0.95 ? 'REVALIDATED' : 'EXPIRED';
          if (cls === 3) status = 304;
        } else if (r < 0.7) {
          method = 'GET';
          path = `/storage/v1/render/image/public/${bucket}/${imageFile(st, c)}`;
          search = `?width=${rng.pick([64, 128, 480, 1080, 1920])}&height=0&quality=${rng.pick([75, 80, 85])}&resize=contain`;
          contentLength = Math.round(rng.logNormal(25000, 0.8));
          cacheStatus = rng.chance(0.7) ? 'HIT' : 'MISS';
        } else if (r < 0.8) {
          method = 'POST';
          path = `/storage/v1/object/${bucket}/${imageFile(st, c)}`;
          contentType = JSON_TYPE;
          contentLength = 130;
          originMedian = 180;
        } else if (r < 0.88) {
          method = 'POST';
          path = `/storage/v1/object/sign/${bucket}/${imageFile(st, c)}`;
          contentType = JSON_TYPE;
          contentLength = 260;
        } else if (r < 0.93) {
          method = 'GET';
          path = `/storage/v1/object/sign/${bucket}/${imageFile(st, c)}`;
          search = `?token=eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.${rng.hex(48)}`;
          contentLength = Math.round(rng.logNormal(60000, 1));
        } else if (r < 0.98) {
          method = 'POST';
          path = `/storage/v1/object/list/${bucket}`;
          contentType = JSON_TYPE;
          contentLength = Math.round(rng.logNormal(3000, 1));
        } else {
          method = 'GET';
          path = '/storage/v1/bucket';
          contentType = JSON_TYPE;
          contentLength = 480;
        }
        return;
      }
      case 'realtime':
        originMedian = 4;
        if (rng.chance(0.9)) {
          method = 'GET';
          path = '/realtime/v1/websocket';
          search = `?apikey=${st.anonKey}&vsn=1.0.0`;
          status = 101;
        } else {
          method = 'POST';
          path = '/realtime/v1/api/broadcast';
          status = 202;
          contentLength = 0;
        }
        return;
      case 'functions': {
        const fn = st.functions.pick(rng);
        path = `/functions/v1/${fn.name}`;
        method = fn.methods.length === 1 ? fn.methods[0]![0] : rng.chance(0.85) ? fn.methods[0]![0] : fn.methods[fn.methods.length - 1]![0];
        if (method === 'GET' && fn.name === 'og-image') search = `?title=${rng.pick(WORDS)}+${rng.pick(WORDS)}&id=${rng.range(1, 9000)}`;
        contentLength = Math.round(rng.logNormal(300, 1));
        originMedian = fn.medianMs + 15;
        return;
      }
      case 'graphql':
        method = 'POST';
        path = '/graphql/v1';
        contentLength = Math.round(rng.logNormal(2500, 1));
        originMedian = 45;
        return;
      case 'pgmeta': {
        const [m, pth, s] = rng.pick(PG_META);
        method = m;
        path = pth;
        search = s;
        contentLength = Math.round(rng.logNormal(20000, 1));
        originMedian = 120;
        return;
      }
      case 'probe':
        method = 'GET';
        path = rng.pick(PROBES);
        contentType = 'text/html';
        contentLength = 0;
        originMedian = 3;
        return;
      case 'double':
        if (rng.chance(0.6)) {
          // `/storage/...` and `/auth` (in `/authenticated`): counts in both families.
          method = 'GET';
          path = `/storage/v1/object/authenticated/${rng.pickSkewed(p.buckets)}/${imageFile(st, c)}`;
          contentLength = Math.round(rng.logNormal(80000, 1));
          originMedian = 40;
        } else {
          // `/rest/...` and `/realtime` (in `/rpc/realtime_...`).
          method = 'POST';
          path = '/rest/v1/rpc/realtime_presence_sync';
          contentLength = 2;
          originMedian = 30;
        }
        return;
    }
  };

  return (ts) => {
    const st = states.pick(rng);
    const c = rng.pickSkewed(st.clients);
    const client = c.client;
    const kind = KINDS.pick(rng);
    const cls = STATUS_CLASS.pick(rng);
    route(kind, st, client, cls);
    if (cls === 3 && status < 300 && kind !== 'realtime') status = method === 'GET' || method === 'HEAD' ? 304 : 307;
    else if (cls === 4) status = CLIENT_ERRORS[kind].pick(rng);
    else if (cls === 5) status = (kind === 'functions' ? FUNCTION_SERVER_ERRORS : SERVER_ERRORS).pick(rng);
    if (cls >= 4) {
      contentType = kind === 'probe' ? 'text/html' : JSON_TYPE;
      contentLength = 60 + rng.int(200);
      cacheStatus = 'DYNAMIC';
    }

    const ray = hex8(rng.u32()) + hex8(rng.u32());
    const url = st.base + path + search;
    const requestHeaders: JsonObject = {
      accept,
      cf_connecting_ip: client.ip,
      cf_ipcountry: client.country,
      cf_ray: ray,
      host: st.host,
      user_agent: client.userAgent,
      x_forwarded_proto: 'https',
      x_real_ip: client.ip,
    };
    if (client.clientInfo !== undefined) requestHeaders['x_client_info'] = client.clientInfo;
    if (client.referer !== undefined) requestHeaders['referer'] = client.referer;
    const prefer = method === 'POST' && kind === 'rest';
    if (prefer) requestHeaders['prefer'] = 'return=representation';

    const date = httpDate(ts);
    const responseHeaders: JsonObject = {
      cf_cache_status: cacheStatus,
      cf_ray: `${ray}-${client.colo}`,
      date,
      sb_gateway_mode: 'direct',
      sb_gateway_version: '1',
    };
    const hasBody = status !== 101 && status !== 204 && status !== 304;
    if (hasBody) {
      responseHeaders['content_length'] = String(contentLength);
      responseHeaders['content_type'] = contentType;
    }
    const worker = workers[rng.int(workers.length)]!;
    const originTime = Math.max(1, Math.round(rng.logNormal(originMedian, 0.8)));
    const request = frozen({
      cf: client.cf,
      headers: Object.freeze(requestHeaders),
      host: st.host,
      method,
      path,
      protocol: 'https:',
      search,
      url,
    });
    const response = frozen({
      headers: Object.freeze(responseHeaders),
      origin_time: originTime,
      status_code: status,
    });
    // The same metadata as JSON text, key for key in the order above (a test checks that it
    // equals JSON.stringify(metadata)). Paths, queries and URLs are built only from pieces
    // without quotes, backslashes or control characters, so they are quoted without escaping.
    const json =
      `{"logflare_worker":${worker.json},"request":{"cf":${c.cfJson},"headers":{"accept":${q(accept)}${c.headersMid}${ray}${c.headersTail}` +
      (prefer ? ',"prefer":"return=representation"}' : '}') +
      `,"host":${st.hostJson},"method":${q(method)},"path":"${path}","protocol":"https:","search":"${search}","url":"${url}"},` +
      `"response":{"headers":{"cf_cache_status":${q(cacheStatus)},"cf_ray":"${ray}-${client.colo}","date":"${date}","sb_gateway_mode":"direct","sb_gateway_version":"1"` +
      (hasBody ? `,"content_length":"${contentLength}","content_type":${q(contentType)}}` : '}') +
      `,"origin_time":${originTime},"status_code":${status}}}`;

    const metadata = frozen({ logflare_worker: worker.value, request, response });
    const eventMessageJson = `"${method} | ${status} | ${c.ipEscaped} | ${ray} | ${url} | ${c.userAgentEscaped}"`;
    return new PreSerializedRecord(
      rng.uuid(),
      ts,
      `${method} | ${status} | ${client.ip} | ${ray} | ${url} | ${client.userAgent}`,
      st.project.ref,
      metadata,
      { eventMessage: eventMessageJson, metadata: json },
    );
  };
}
