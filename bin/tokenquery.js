#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm install` (the `prepare` script).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write(
    'tokenquery: not built yet; run `npm install` (or `npm run build`) in the repository first\n',
  );
  process.exit(1);
}
await import(entry.href);
