// The shared styles first: every feature's own stylesheet, imported by its page, comes after them.
import './ui/styles.css';
import { QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { adoptKeyFromLocation, shareKeyWithOtherTabs } from './api/client.ts';
import { createQueryClient } from './api/hooks.ts';
import { App } from './app.tsx';
import { ViewProvider } from './app-state.tsx';
import { applyInitialTheme } from './lib/theme.ts';

// First thing: take the key out of the address bar, before anything can read or log the URL.
adoptKeyFromLocation();
// A link this tab opens in a new tab gets the key from here, not from the URL (api/client.ts).
shareKeyWithOtherTabs();
applyInitialTheme();

const root = document.getElementById('root');
if (!root) throw new Error('#root is missing from index.html');
createRoot(root).render(
  <StrictMode>
    <QueryClientProvider client={createQueryClient()}>
      <ViewProvider>
        <App />
      </ViewProvider>
    </QueryClientProvider>
  </StrictMode>,
);
