/**
 * `npm run import -- --data-dir DIR [--source NAME] [--project REF] FILE...`
 * Prints one JSON report per file; exits 1 if any file failed entirely.
 */
import { parseArgs } from 'node:util';
import { LogStore } from '../store/log-store.ts';
import { defaultDataDir } from '../store/data-dir.ts';
import { ImportFailure, importFile } from './import.ts';

const { values, positionals } = parseArgs({
  options: {
    'data-dir': { type: 'string' },
    source: { type: 'string' },
    project: { type: 'string' },
  },
  allowPositionals: true,
});

if (positionals.length === 0) {
  console.error('usage: npm run import -- --data-dir DIR [--source NAME] [--project REF] FILE...');
  process.exit(2);
}

const store = await LogStore.open(values['data-dir'] ?? defaultDataDir());
let failed = false;
for (const file of positionals) {
  try {
    const report = await importFile(store, file, { source: values.source, project: values.project });
    console.log(JSON.stringify(report));
  } catch (err) {
    failed = true;
    const reason = err instanceof ImportFailure ? err.message : `internal error: ${(err as Error).stack ?? err}`;
    console.log(JSON.stringify({ file, failed: true, reason }));
  }
}
await store.close();
process.exit(failed ? 1 : 0);
