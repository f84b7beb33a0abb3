// Every listener of the service is made and stopped here, with one set of protections
// against slow and greedy clients (server.ts), and given what it needs before it serves (a
// Unix socket's directory, group and mode, the TLS policy). Runs in the serving
// process, and in the primary of --workers for its admin listener; the API listener and
// the admin listener both use it.
//
// This file is the room's door: the other rooms import from it only.

export { isLoopback, listenOn } from './listen.js';
export {
  type ConnectionLimits,
  createListener,
  inFlightGraceMs,
  type PrimaryOfListener,
  stopBoundMs,
  stopListening,
} from './server.js';
export { prepareSocketPath, useSocketMode } from './socket.js';
export { type TlsMinVersion, tlsPairProblem, tlsPolicy, tlsRefusal } from './tls.js';
