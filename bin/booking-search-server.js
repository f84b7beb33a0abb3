#!/usr/bin/env node
// The installed command. The code lives in TypeScript under bin/ and lib/, compiled to
// dist/ by `npm install` (the prepare script).
import { main } from '../dist/bin/cli.js';

await main(process.argv.slice(2), process.env);
