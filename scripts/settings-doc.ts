// Writes docs/settings.md from the one table of settings (bin/config/settings.ts) and --help's own
// words (bin/config/args.ts): `npm run docs:settings`. test/unit/settings.test.ts fails when the
// file and what this writes differ, so a setting changed in the table reaches the document.

import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { USAGE } from '../bin/config/args.js';
import { variableName } from '../bin/config/configuration.js';
import type { Reload, Setting } from '../bin/config/setting-kinds.js';
import { type Flag, SETTINGS } from '../bin/config/settings.js';

const RELOAD: Record<Reload, string> = {
  restart: 'restart',
  file: 'file re-read',
  book: 'yes, in a book',
};

/** A table cell: no line break, no bare `|`. */
function cell(text: string): string {
  return text.replaceAll('\n', ' ').replaceAll('|', '\\|');
}

function shownDefault(setting: Setting<unknown>): string {
  const value = setting.default;
  if (value === undefined || value === false) return '—';
  if (Array.isArray(value) && value.length === 0) return '—';
  if (typeof value === 'object' && value !== null && Object.keys(value).length === 0) return '—';
  return `\`${setting.show(value)}\``;
}

/** One row: flag, key, variable, default, bounds, reload, help. */
function row(flag: Flag, setting: Setting<unknown>): string {
  const head = `\`--${flag}${setting.placeholder === undefined ? '' : ` ${setting.placeholder}`}\``;
  const key = setting.configurable ? `\`${flag}\`` : '—';
  const variable = setting.configurable || flag === 'config' ? `\`${variableName(flag)}\`` : '—';
  const bounds = setting.bounds === undefined ? '' : `${setting.bounds[0]}–${setting.bounds[1]}`;
  // The default has a column of its own.
  const help = setting.help
    .replace(/ \(default \{default\}\)/, '')
    .replace('{default}', () => setting.show(setting.default));
  return `| ${[head, key, variable, shownDefault(setting), bounds, RELOAD[setting.reload], cell(help)].join(' | ')} |`;
}

const FENCE = '```';

/** docs/settings.md as the table and --help make it. */
export function settingsReference(): string {
  const [commands = '', rest = ''] = USAGE.split('Options:\n');
  const closing = rest.slice(rest.indexOf('\n\n') + 2);
  const rows = (Object.entries(SETTINGS) as Array<[Flag, Setting<unknown>]>).map(([flag, setting]) =>
    row(flag, setting),
  );
  return `# The command and its settings

For admins: every command of \`booking-search-server\` and every setting, with what a
reload (\`SIGHUP\`) does with it. How to use them: [operations.md](operations.md).
\`npm run docs:settings\` writes this page from the command's table of settings and
\`--help\`; a test fails when they differ.

${FENCE}text
${commands.trimEnd()}
${FENCE}

${FENCE}text
${closing.trimEnd()}
${FENCE}

A repeated setting (\`--cors-origin\`) is one comma-separated value in a variable or the
file; an empty variable counts as not set. In the column *reload*: \`restart\`: at the next
start (a reload names it); \`file re-read\`: a reload reads the running file again; a new
path or a removed line waits for the next start (a reload names it); \`yes, in a book\`: a
\`[book NAME]\` section's key, applied by a reload.

| flag | key | variable | default | bounds | reload | what it does |
|---|---|---|---|---|---|---|
${rows.join('\n')}
`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const path = fileURLToPath(new URL('../docs/settings.md', import.meta.url));
  writeFileSync(path, settingsReference());
  console.log(`wrote ${path}`);
}
