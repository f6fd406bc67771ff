/**
 * The callers behind the demo traffic: places (Cloudflare geo fields), user agents, IPs.
 * Each project gets a pool of clients built once per generation; records pick a client
 * (skewed, so a few clients make most requests) and share its frozen `cf` object.
 */
import type { JsonObject } from '../store/shape.ts';
import type { DemoProject } from './projects.ts';
import { deepFreeze, Weighted, type Rng } from './random.ts';

interface Place {
  city: string;
  country: string;
  continent: string;
  region: string;
  regionCode: string;
  postalCode: string;
  latitude: string;
  longitude: string;
  timezone: string;
  colo: string;
  asn: number;
  asOrganization: string;
  eu: boolean;
}

// Non-ASCII names on purpose (São Paulo, Zürich, Île-de-France): exports must round-trip UTF-8.
const PLACES: readonly Place[] = [
  { city: 'Ashburn', country: 'US', continent: 'NA', region: 'Virginia', regionCode: 'VA', postalCode: '20147', latitude: '39.04372', longitude: '-77.48749', timezone: 'America/New_York', colo: 'IAD', asn: 14618, asOrganization: 'Amazon.com, Inc.', eu: false },
  { city: 'New York', country: 'US', continent: 'NA', region: 'New York', regionCode: 'NY', postalCode: '10001', latitude: '40.71427', longitude: '-74.00597', timezone: 'America/New_York', colo: 'EWR', asn: 7922, asOrganization: 'Comcast Cable Communications, LLC', eu: false },
  { city: 'San Francisco', country: 'US', continent: 'NA', region: 'California', regionCode: 'CA', postalCode: '94103', latitude: '37.77493', longitude: '-122.41942', timezone: 'America/Los_Angeles', colo: 'SJC', asn: 7018, asOrganization: 'AT&T Services, Inc.', eu: false },
  { city: 'Berlin', country: 'DE', continent: 'EU', region: 'Land Berlin', regionCode: 'BE', postalCode: '10115', latitude: '52.52437', longitude: '13.41053', timezone: 'Europe/Berlin', colo: 'TXL', asn: 3209, asOrganization: 'Vodafone GmbH', eu: true },
  { city: 'Frankfurt am Main', country: 'DE', continent: 'EU', region: 'Hesse', regionCode: 'HE', postalCode: '60311', latitude: '50.11552', longitude: '8.68417', timezone: 'Europe/Berlin', colo: 'FRA', asn: 16509, asOrganization: 'Amazon.com, Inc.', eu: true },
  { city: 'Paris', country: 'FR', continent: 'EU', region: 'Île-de-France', regionCode: 'IDF', postalCode: '75001', latitude: '48.85341', longitude: '2.3488', timezone: 'Europe/Paris', colo: 'CDG', asn: 3215, asOrganization: 'Orange S.A.', eu: true },
  { city: 'London', country: 'GB', continent: 'EU', region: 'England', regionCode: 'ENG', postalCode: 'EC1A', latitude: '51.50853', longitude: '-0.12574', timezone: 'Europe/London', colo: 'LHR', asn: 2856, asOrganization: 'British Telecommunications PLC', eu: false },
  { city: 'Zürich', country: 'CH', continent: 'EU', region: 'Zurich', regionCode: 'ZH', postalCode: '8001', latitude: '47.36667', longitude: '8.55', timezone: 'Europe/Zurich', colo: 'ZRH', asn: 3303, asOrganization: 'Swisscom (Schweiz) AG', eu: false },
  { city: 'Warsaw', country: 'PL', continent: 'EU', region: 'Mazovia', regionCode: '14', postalCode: '00-001', latitude: '52.22977', longitude: '21.01178', timezone: 'Europe/Warsaw', colo: 'WAW', asn: 5617, asOrganization: 'Orange Polska Spolka Akcyjna', eu: true },
  { city: 'São Paulo', country: 'BR', continent: 'SA', region: 'São Paulo', regionCode: 'SP', postalCode: '01310-100', latitude: '-23.5475', longitude: '-46.63611', timezone: 'America/Sao_Paulo', colo: 'GRU', asn: 28573, asOrganization: 'Claro NXT Telecomunicacoes Ltda', eu: false },
  { city: 'Mexico City', country: 'MX', continent: 'NA', region: 'Mexico City', regionCode: 'CMX', postalCode: '06000', latitude: '19.42847', longitude: '-99.12766', timezone: 'America/Mexico_City', colo: 'QRO', asn: 8151, asOrganization: 'UNINET', eu: false },
  { city: 'Lagos', country: 'NG', continent: 'AF', region: 'Lagos', regionCode: 'LA', postalCode: '100001', latitude: '6.45407', longitude: '3.39467', timezone: 'Africa/Lagos', colo: 'LOS', asn: 29465, asOrganization: 'MTN NIGERIA Communication limited', eu: false },
  { city: 'Bengaluru', country: 'IN', continent: 'AS', region: 'Karnataka', regionCode: 'KA', postalCode: '560001', latitude: '12.97194', longitude: '77.59369', timezone: 'Asia/Kolkata', colo: 'BLR', asn: 24560, asOrganization: 'Bharti Airtel Ltd.', eu: false },
  { city: 'Singapore', country: 'SG', continent: 'AS', region: 'Singapore', regionCode: '01', postalCode: '018956', latitude: '1.28967', longitude: '103.85007', timezone: 'Asia/Singapore', colo: 'SIN', asn: 9506, asOrganization: 'Singtel Fibre Broadband', eu: false },
  { city: 'Tokyo', country: 'JP', continent: 'AS', region: 'Tokyo', regionCode: '13', postalCode: '100-0001', latitude: '35.6895', longitude: '139.69171', timezone: 'Asia/Tokyo', colo: 'NRT', asn: 2516, asOrganization: 'KDDI CORPORATION', eu: false },
  { city: 'Sydney', country: 'AU', continent: 'OC', region: 'New South Wales', regionCode: 'NSW', postalCode: '2000', latitude: '-33.86785', longitude: '151.20732', timezone: 'Australia/Sydney', colo: 'SYD', asn: 1221, asOrganization: 'Telstra Corporation Ltd', eu: false },
];

export type ClientKind = 'browser' | 'mobile' | 'server';

interface Agent {
  kind: ClientKind;
  userAgent: string;
  clientInfo?: string;
}

const AGENTS: readonly Agent[] = [
  { kind: 'browser', userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36', clientInfo: 'supabase-js-web/2.46.1' },
  { kind: 'browser', userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36', clientInfo: 'supabase-js-web/2.46.1' },
  { kind: 'browser', userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0', clientInfo: 'supabase-js-web/2.45.4' },
  { kind: 'browser', userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Mobile/15E148 Safari/604.1', clientInfo: 'supabase-js-web/2.46.1' },
  { kind: 'browser', userAgent: 'Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0', clientInfo: 'supabase-js-web/2.44.2' },
  { kind: 'browser', userAgent: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.6723.107 Mobile Safari/537.36', clientInfo: 'supabase-js-web/2.46.1' },
  { kind: 'browser', userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15', clientInfo: 'supabase-js-web/2.46.1' },
  { kind: 'mobile', userAgent: 'Dart/3.5 (dart:io)', clientInfo: 'supabase-flutter/2.8.0' },
  { kind: 'mobile', userAgent: 'okhttp/4.12.0', clientInfo: 'supabase-kt/3.0.2' },
  { kind: 'mobile', userAgent: 'Expo/1017756 CFNetwork/1568.100.1 Darwin/24.0.0', clientInfo: 'supabase-js-react-native/2.45.4' },
  { kind: 'server', userAgent: 'node', clientInfo: 'supabase-js-node/2.45.4' },
  { kind: 'server', userAgent: 'node-fetch/1.0 (+https://github.com/bitinn/node-fetch)', clientInfo: 'supabase-js-node/2.39.8' },
  { kind: 'server', userAgent: 'Deno/1.45.2 (variant; SupabaseEdgeRuntime/1.58.3)', clientInfo: 'supabase-js-deno/2.46.1' },
  { kind: 'server', userAgent: 'python-httpx/0.27.2', clientInfo: 'supabase-py/2.10.0' },
  { kind: 'server', userAgent: 'curl/8.7.1' },
  { kind: 'server', userAgent: 'PostmanRuntime/7.42.0' },
];

const AGENTS_BY_KIND: Record<ClientKind, readonly Agent[]> = {
  browser: AGENTS.filter((a) => a.kind === 'browser'),
  mobile: AGENTS.filter((a) => a.kind === 'mobile'),
  server: AGENTS.filter((a) => a.kind === 'server'),
};
const CLIENT_KINDS = new Weighted<ClientKind>([['browser', 45], ['mobile', 25], ['server', 30]]);

const TLS = [
  ['TLSv1.3', 'AEAD-AES128-GCM-SHA256'],
  ['TLSv1.3', 'AEAD-AES256-GCM-SHA384'],
  ['TLSv1.3', 'AEAD-CHACHA20-POLY1305-SHA256'],
  ['TLSv1.2', 'ECDHE-RSA-AES128-GCM-SHA256'],
] as const;

export interface Client {
  kind: ClientKind;
  ip: string;
  country: string;
  colo: string;
  userAgent: string;
  clientInfo: string | undefined;
  referer: string | undefined;
  /** The signed-in user behind this client (browsers and apps), used in filters and paths. */
  userId: string;
  email: string;
  /** Cloudflare's request.cf object, frozen and shared by all of this client's records. */
  cf: JsonObject;
}

function ipv4(rng: Rng): string {
  // Public-looking first octets only (no 10/8, 127/8, 172.16/12, 192.168/16).
  const first = rng.pick([23, 31, 37, 45, 52, 54, 62, 77, 81, 89, 94, 102, 109, 138, 151, 176, 185, 188, 201, 213]);
  return `${first}.${rng.int(256)}.${rng.int(256)}.${1 + rng.int(254)}`;
}

function ipv6(rng: Rng): string {
  return `${rng.pick(['2a02:8109', '2600:1700', '2001:4860', '2a01:e0a'])}:${rng.hex(4)}:${rng.hex(4)}:${rng.hex(4)}:${rng.hex(4)}:${rng.hex(4)}:${rng.hex(4)}`;
}

/** A public IP as a client shows up in logs (about one in six is IPv6). */
export function randomIp(rng: Rng): string {
  return rng.chance(0.16) ? ipv6(rng) : ipv4(rng);
}

const FIRST_NAMES = ['maria', 'jan', 'aiko', 'li.wei', 'oluwaseun', 'sofia', 'liam', 'priya', 'mateo', 'noah', 'emma', 'yusuf'];
const MAIL_DOMAINS = ['gmail.com', 'outlook.com', 'proton.me', 'icloud.com', 'example.org'];

export function makeClients(rng: Rng, project: DemoProject, n: number): Client[] {
  const clients: Client[] = [];
  for (let i = 0; i < n; i++) {
    const agent = rng.pick(AGENTS_BY_KIND[CLIENT_KINDS.pick(rng)]);
    // Server-side callers sit in data centers (Ashburn, Frankfurt); people are everywhere.
    const place = agent.kind === 'server' ? PLACES[rng.chance(0.6) ? 0 : 4]! : rng.pick(PLACES);
    const [tlsVersion, tlsCipher] = rng.pick(TLS);
    const score = agent.kind === 'server' ? rng.range(1, 30) : rng.range(30, 99);
    // Field sets vary like Cloudflare's do: bot scores only on some plans, geo detail and
    // client-certificate info not always present.
    const cf: JsonObject = {
      asOrganization: place.asOrganization,
      asn: place.asn,
    };
    if (rng.chance(0.3)) {
      cf['botManagement'] = { corporateProxy: false, ja3Hash: rng.hex(32), score, staticResource: false, verifiedBot: false };
    }
    cf['city'] = place.city;
    if (agent.kind === 'browser') cf['clientAcceptEncoding'] = 'gzip, deflate, br, zstd';
    cf['clientTrustScore'] = score;
    cf['colo'] = place.colo;
    cf['continent'] = place.continent;
    cf['country'] = place.country;
    cf['httpProtocol'] = agent.kind === 'browser' ? rng.pick(['HTTP/2', 'HTTP/3']) : rng.pick(['HTTP/1.1', 'HTTP/2']);
    if (place.eu) cf['isEUCountry'] = '1';
    const precise = rng.chance(0.7);
    if (precise) {
      cf['latitude'] = place.latitude;
      cf['longitude'] = place.longitude;
      cf['postalCode'] = place.postalCode;
    }
    cf['region'] = place.region;
    cf['regionCode'] = place.regionCode;
    cf['timezone'] = place.timezone;
    cf['tlsCipher'] = tlsCipher;
    if (rng.chance(0.4)) cf['tlsClientAuth'] = { certPresented: '0', certRevoked: '0', certVerified: 'NONE' };
    cf['tlsVersion'] = tlsVersion;
    const user = rng.pick(FIRST_NAMES);
    clients.push({
      kind: agent.kind,
      ip: randomIp(rng),
      country: place.country,
      colo: place.colo,
      userAgent: agent.userAgent,
      clientInfo: agent.clientInfo,
      referer: agent.kind === 'browser' && rng.chance(0.7) ? `https://${project.name}.app/${rng.pick(['', 'account', 'dashboard', 'search', 'checkout'])}` : undefined,
      userId: rng.uuid(),
      email: `${user}${rng.int(100)}@${rng.pick(MAIL_DOMAINS)}`,
      cf: deepFreeze(cf),
    });
  }
  return clients;
}
