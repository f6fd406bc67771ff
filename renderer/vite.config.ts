import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The server serves dist/renderer at `/` with a strict CSP: no inline scripts, no CDNs.
export default defineConfig({
  root: new URL('.', import.meta.url).pathname,
  base: '/',
  plugins: [react()],
  build: {
    outDir: '../dist/renderer',
    emptyOutDir: true,
    sourcemap: true,
    chunkSizeWarningLimit: 1200,
  },
});
