import { QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { onApiWrite } from './api.js';
import { App } from './App.js';
import { invalidateAfterWrite, queryClient } from './query/query-client.js';
import { AuthProvider } from './session.js';
import './styles.css';
import { applyTheme, storedTheme } from './ui/theme.js';

// Before anything renders, so the page never shows the other theme first (ui/theme.ts).
applyTheme(storedTheme());
onApiWrite(invalidateAfterWrite);

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <AuthProvider>
        <App />
      </AuthProvider>
    </QueryClientProvider>
  </StrictMode>,
);
