// Who waits for a turn, and whose query runs next: the users in rotation, the addresses of
// one user in rotation, the connections of one address in rotation (lib/search/turns.ts runs
// the queries; this only decides their order).

/** Who asked for a queued query. */
export interface Requester {
  /** The authenticated user: the users take turns, whatever number of addresses each comes from. */
  user?: string;
  /** The client's address: the addresses of one user take turns. */
  address: string;
  /**
   * The client's connection (its socket): the connections of one address take turns, and
   * once it is `destroyed` (the client left), its queries are skipped and their `done` never called.
   */
  connection: { readonly destroyed?: boolean };
}

// The three rotations, each a Map for finding an entry and an array in the order of the
// rotation (the first entry is served next, then goes to the end or, when it has nothing
// left, out of both): no iterator, closure or entry array is made to find the next query.
// A connection's entry is its jobs, never empty while it is in the rotation.
interface AddressEntry<J> {
  address: string;
  connections: Map<object, J[]>;
  order: J[][];
}
interface UserEntry<J> {
  user: string;
  addresses: Map<string, AddressEntry<J>>;
  order: AddressEntry<J>[];
  /** Its queries waiting, from all its addresses. */
  waiting: number;
}

/**
 * The waiting jobs, each with the `from` that asked for it, in rotation: a user with many
 * queued (pipelined, over many connections, or from many addresses) delays another user by
 * at most one of its own a round, another address of its own by at most one per address,
 * and another connection of its own address by at most one per connection.
 */
export class Rotations<J extends { readonly from: Requester }> {
  private readonly users = new Map<string, UserEntry<J>>();
  private readonly order: UserEntry<J>[] = [];
  private readonly byAddress = new Map<string, number>();
  /** The jobs of each user kept out of the rotations while they wait out a lock (`countAside`). */
  private readonly asideFor = new Map<string, number>();

  /** Whether no job waits. */
  get empty(): boolean {
    return this.order.length === 0;
  }

  /** `job` joins: a new user, address or connection at the end of its rotation. */
  add(job: J): void {
    const { from } = job;
    const name = from.user ?? '';
    let user = this.users.get(name);
    if (user === undefined) {
      user = { user: name, addresses: new Map(), order: [], waiting: 0 };
      this.users.set(name, user);
      this.order.push(user);
    }
    let address = user.addresses.get(from.address);
    if (address === undefined) {
      address = { address: from.address, connections: new Map(), order: [] };
      user.addresses.set(from.address, address);
      user.order.push(address);
    }
    const jobs = address.connections.get(from.connection);
    if (jobs !== undefined) jobs.push(job);
    else {
      const first = [job];
      address.connections.set(from.connection, first);
      address.order.push(first);
    }
    user.waiting += 1;
    this.countAddress(from.address, 1);
  }

  /** The next job whose client has not left (its user, address and connection then go to the end), or `undefined`. */
  next(): J | undefined {
    for (;;) {
      const user = this.order[0];
      if (user === undefined) return undefined;
      const address = user.order[0] as AddressEntry<J>;
      const jobs = address.order[0] as J[];
      const job = jobs.shift() as J;
      // Each entry served goes to the end of its rotation, or out once it has nothing left.
      if (jobs.length > 0) rotate(address.order);
      else dropFirst(address.order, address.connections, job.from.connection);
      if (address.order.length > 0) rotate(user.order);
      else dropFirst(user.order, user.addresses, address.address);
      user.waiting -= 1;
      if (user.order.length > 0) rotate(this.order);
      else dropFirst(this.order, this.users, user.user);
      this.countAddress(address.address, -1);
      if (job.from.connection.destroyed !== true) return job;
    }
  }

  /**
   * The rotations as if a job of `from` had been served from them first: its user, its
   * address and its connection go to the end of their rotations.
   */
  served(from: Requester): void {
    const user = this.users.get(from.user ?? '');
    if (user === undefined) return;
    toTheEnd(this.order, (entry) => entry === user);
    const address = user.addresses.get(from.address);
    if (address === undefined) return;
    toTheEnd(user.order, (entry) => entry === address);
    toTheEnd(address.order, (jobs) => jobs[0]?.from.connection === from.connection);
  }

  /** Whether a job waits whose client has left (`next` skips it only when its turn comes). */
  get anyLeft(): boolean {
    for (const user of this.order)
      for (const address of user.order)
        for (const jobs of address.order) if (jobs[0]?.from.connection.destroyed) return true;
    return false;
  }

  /** How many jobs of `address` (whoever's) wait. */
  waitingFrom(address: string): number {
    return this.byAddress.get(address) ?? 0;
  }

  /** How many jobs of `user` (from any address) wait. */
  waitingFor(user: string): number {
    return (this.users.get(user)?.waiting ?? 0) + (this.asideFor.get(user) ?? 0);
  }

  /**
   * Counts a job of `from` as waiting (`by` 1) while it is kept out of the rotations, a
   * query that waits out a lock (lib/search/queued.ts), and no longer (`by` -1).
   */
  countAside(from: Requester, by: 1 | -1): void {
    this.countAddress(from.address, by);
    const user = from.user ?? '';
    const now = (this.asideFor.get(user) ?? 0) + by;
    if (now === 0) this.asideFor.delete(user);
    else this.asideFor.set(user, now);
  }

  private countAddress(address: string, by: number): void {
    const now = (this.byAddress.get(address) ?? 0) + by;
    if (now === 0) this.byAddress.delete(address);
    else this.byAddress.set(address, now);
  }
}

/** The first entry goes to the end, behind the others (when there are others). */
function rotate<T>(entries: T[]): void {
  if (entries.length > 1) entries.push(entries.shift() as T);
}

/** The first entry out of its rotation and of the Map that finds it by `key`. */
function dropFirst<K, T>(entries: T[], byKey: Map<K, T>, key: K): void {
  entries.shift();
  byKey.delete(key);
}

/** Moves the entry that `isIt` finds to the end of `entries`. */
function toTheEnd<T>(entries: T[], isIt: (entry: T) => boolean): void {
  for (let i = 0; i < entries.length - 1; i += 1) {
    if (isIt(entries[i] as T)) {
      entries.push(entries.splice(i, 1)[0] as T);
      return;
    }
  }
}
