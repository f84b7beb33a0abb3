// What a listener is given before it serves: a Unix socket's directory, group and mode, the
// TLS policy, and the sweep that closes a connection whose answer does not leave. Runs in
// the serving process; the API listener and the admin listener both use it.
//
// This file is the room's door: the other rooms import from it only.

export { closeStalledConnections } from './send-timeout.js';
export { applySocketGroup, prepareSocketPath, useSocketMode } from './socket.js';
export { type TlsMinVersion, tlsPairProblem, tlsPolicy, tlsRefusal } from './tls.js';
