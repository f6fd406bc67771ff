/** Writes made durable: the file's data, and the folder entries that name it. */
import fs from 'node:fs';

/** Writes `data` to `file` (0600) and fsyncs it. */
export async function writeSynced(file: string, data: Uint8Array | string): Promise<void> {
  const handle = await fs.promises.open(file, 'w', 0o600);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export async function syncFile(file: string): Promise<void> {
  const handle = await fs.promises.open(file, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export async function syncDir(dir: string): Promise<void> {
  // Directory fsync makes the rename durable; Windows cannot open directories, and needs none.
  if (process.platform === 'win32') return;
  const handle = await fs.promises.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
