// The package's own name, version and OpenAPI description, as the installed package has them.

import { readFileSync } from 'node:fs';

export const NAME = 'booking-search-server';

export function readVersion(): string {
  return (JSON.parse(readPackageFile('package.json')) as { version: string }).version;
}

/** A file the package ships, found through its own exports (from src/ and dist/ alike). */
export function readPackageFile(name: 'package.json' | 'openapi.json'): string {
  return readFileSync(new URL(import.meta.resolve(`booking-search-server/${name}`)), 'utf8');
}
