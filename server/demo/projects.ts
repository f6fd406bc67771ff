/**
 * The demo projects: three made-up Supabase projects with unequal traffic (busy, medium,
 * quiet), each with its edge functions, tables, RPCs and storage buckets. Tests import these
 * to know which refs and function ids the generated data holds.
 */

export interface DemoFunction {
  /** The function's UUID, as `metadata.function_id` carries it. */
  readonly id: string;
  /** The slug in `/functions/v1/<name>`. */
  readonly name: string;
  /** Share of the project's function invocations. */
  readonly weight: number;
  /** Median execution time of a warm invocation, in ms. */
  readonly medianMs: number;
  /** HTTP methods its callers use, with weights. */
  readonly methods: ReadonlyArray<readonly [string, number]>;
  /** Current deployed version; older records carry older versions. */
  readonly version: number;
  /** A new version was deployed about this often (days). */
  readonly deployEveryDays: number;
  /** Who calls it when not a user's browser or app: a third-party webhook or a pg_cron job. */
  readonly caller?: 'webhook' | 'cron';
}

export interface DemoProject {
  /** The 20-letter project reference. */
  readonly ref: string;
  readonly name: string;
  /** Share of every source's records that belong to this project. */
  readonly traffic: number;
  /** Deno Deploy region its functions run in (`metadata.region`, `server` header). */
  readonly functionRegion: string;
  /** AWS region of its database host. */
  readonly awsRegion: string;
  readonly functions: readonly DemoFunction[];
  readonly tables: readonly string[];
  readonly rpcs: readonly string[];
  readonly buckets: readonly string[];
}

export const DEMO_PROJECTS: readonly DemoProject[] = [
  {
    ref: 'ouwmmbchcsjxvtfobujc',
    name: 'acme-shop',
    traffic: 0.7,
    functionRegion: 'us-east-1',
    awsRegion: 'us-east-1',
    functions: [
      {
        id: '4018ece5-d3f8-4bf6-a0b2-d461f0be93fd',
        name: 'stripe-webhook',
        weight: 30,
        medianMs: 45,
        methods: [['POST', 1]],
        version: 27,
        deployEveryDays: 6,
        caller: 'webhook',
      },
      {
        id: '0772ad0f-e6e6-4d16-9464-d8e03c40c55c',
        name: 'send-order-email',
        weight: 25,
        medianMs: 60,
        methods: [['POST', 9], ['OPTIONS', 1]],
        version: 14,
        deployEveryDays: 11,
      },
      {
        id: 'b0af6e05-d441-430c-a5f5-ea4a87c2889f',
        name: 'og-image',
        weight: 30,
        medianMs: 35,
        methods: [['GET', 1]],
        version: 9,
        deployEveryDays: 20,
      },
      {
        id: '2165205c-76be-4d21-84e8-f391b9def5e7',
        name: 'resize-product-image',
        weight: 10,
        medianMs: 140,
        methods: [['POST', 8], ['OPTIONS', 2]],
        version: 6,
        deployEveryDays: 30,
      },
      {
        id: '35654b1a-5376-46ed-9f75-bd6eb3cfa9fa',
        name: 'generate-embeddings',
        weight: 5,
        medianMs: 220,
        methods: [['POST', 1]],
        version: 41,
        deployEveryDays: 3,
      },
    ],
    tables: ['products', 'orders', 'order_items', 'profiles', 'carts', 'reviews', 'categories'],
    rpcs: ['search_products', 'get_cart_total', 'apply_coupon'],
    buckets: ['product-images', 'avatars', 'invoices'],
  },
  {
    ref: 'blcewytrjvljrooddvav',
    name: 'field-notes',
    traffic: 0.24,
    functionRegion: 'eu-central-1',
    awsRegion: 'eu-central-1',
    functions: [
      {
        id: '37e30613-594b-44a4-9294-038cc0d00680',
        name: 'push-notifications',
        weight: 50,
        medianMs: 25,
        methods: [['POST', 1]],
        version: 12,
        deployEveryDays: 14,
      },
      {
        id: '26797c65-f7ec-44c4-82c5-3b8c429cfbc4',
        name: 'sync-calendar',
        weight: 30,
        medianMs: 70,
        methods: [['POST', 7], ['GET', 2], ['OPTIONS', 1]],
        version: 5,
        deployEveryDays: 25,
      },
      {
        id: '44393f6f-06fc-4eec-84ed-49b070342411',
        name: 'notion-import',
        weight: 15,
        medianMs: 150,
        methods: [['POST', 9], ['OPTIONS', 1]],
        version: 3,
        deployEveryDays: 40,
      },
      {
        id: '772b9038-08de-4d9f-bcaa-c027e18330cb',
        name: 'openai-summarize',
        weight: 5,
        medianMs: 300,
        methods: [['POST', 9], ['OPTIONS', 1]],
        version: 18,
        deployEveryDays: 5,
      },
    ],
    tables: ['notes', 'notebooks', 'tags', 'note_tags', 'profiles'],
    rpcs: ['match_notes', 'move_note'],
    buckets: ['attachments', 'avatars'],
  },
  {
    ref: 'bzpkezpugdwviesknuzj',
    name: 'plant-journal',
    traffic: 0.06,
    functionRegion: 'ap-southeast-2',
    awsRegion: 'ap-southeast-2',
    functions: [
      {
        id: '8ec87598-050f-4519-bdfd-b8b7ecb8e9b8',
        name: 'hello-world',
        weight: 60,
        medianMs: 8,
        methods: [['GET', 1], ['POST', 1]],
        version: 2,
        deployEveryDays: 80,
      },
      {
        id: 'ac0358db-3a41-4ac3-bac6-9c31da98d9fd',
        name: 'weather-alerts',
        weight: 30,
        medianMs: 40,
        methods: [['POST', 1]],
        version: 7,
        deployEveryDays: 15,
        caller: 'cron',
      },
      {
        id: '2e59af88-47aa-4468-968a-ea239d6be3de',
        name: 'nightly-cleanup',
        weight: 10,
        medianMs: 90,
        methods: [['POST', 1]],
        version: 4,
        deployEveryDays: 35,
        caller: 'cron',
      },
    ],
    tables: ['plants', 'waterings', 'profiles'],
    rpcs: ['next_watering'],
    buckets: ['plant-photos'],
  },
];

/** The function's version that was live `ageDays` before now. */
export function versionAt(fn: DemoFunction, ageDays: number): number {
  return Math.max(1, fn.version - Math.floor(ageDays / fn.deployEveryDays));
}
