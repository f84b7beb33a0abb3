// Small facts about thrown values, shared by the library and the CLI.

/** The `code` of a Node or SQLite error (`'ENOENT'`, `'SQLITE_BUSY'`), or `undefined`. */
export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** `Name: message` for an Error, the value as text otherwise; never a stack. */
export function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
