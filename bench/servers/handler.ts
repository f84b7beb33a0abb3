// The library alone: createHandler on a bare node:http server, without what the CLI adds
// (the access log, the timeouts, the protocol-error answers, the database watcher).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Database from 'better-sqlite3';
import { createHandler } from '../../lib/index.js';
import { announce, args, PASSWORD, USER } from './common.js';

const db = new Database(args.db ?? '', { readonly: true, fileMustExist: true });
const handler = createHandler(db, { username: USER, password: PASSWORD }, { maxAuthFailures: 0 });
const server = createServer(handler);
server.listen(Number(args.port), '127.0.0.1', () => announce((server.address() as AddressInfo).port));
