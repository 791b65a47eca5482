/**
 * A logind double for the shutdown manager: inhibit delay, drop-in reloads, locks and the
 * `PrepareForShutdown` signal, with a call log and injectable failures.
 *
 * @module
 */
import type { ShutdownLock, ShutdownLogind } from "./shutdown_manager.ts";

/** One lock handed out by {@linkcode FakeLogind}. */
export interface FakeLock extends ShutdownLock {
  released: boolean;
}

/** logind's side of every connection the manager opens. */
export class FakeLogind {
  /** `InhibitDelayMaxUSec` in ms (logind's default is 5 s). */
  inhibitDelayMs = 5_000;
  /** What the drop-in says after the last write (applied by `reloadLogind`). */
  dropInSeconds: number | undefined;
  /** Set false to simulate a logind that ignores the drop-in (as with a higher-priority file). */
  reloadApplies = true;
  readonly calls: string[] = [];
  readonly locks: FakeLock[] = [];
  /** Connections made so far (the latest is the live one). */
  readonly connections: FakeLogindConnection[] = [];
  #errors = new Map<string, Error[]>();
  #nextFd = 10;

  injectError(method: string, error: Error): void {
    this.#errors.set(method, [...(this.#errors.get(method) ?? []), error]);
  }

  enter(method: string): void {
    this.calls.push(method);
    const error = this.#errors.get(method)?.shift();
    if (error) throw error;
  }

  /** `NodeShutdownDeps.connect`. */
  connect = (): Promise<ShutdownLogind> => {
    try {
      this.enter("connect");
    } catch (error) {
      return Promise.reject(error);
    }
    const connection = new FakeLogindConnection(this);
    this.connections.push(connection);
    return Promise.resolve(connection);
  };

  /** `NodeShutdownDeps.writeInhibitDelay`. */
  writeInhibitDelay = (seconds: number): Promise<void> => {
    try {
      this.enter("writeInhibitDelay");
    } catch (error) {
      return Promise.reject(error);
    }
    this.dropInSeconds = seconds;
    return Promise.resolve();
  };

  newLock(): FakeLock {
    const lock: FakeLock = {
      fd: this.#nextFd++,
      released: false,
      release() {
        lock.released = true;
      },
    };
    this.locks.push(lock);
    return lock;
  }

  /** Locks not released yet. */
  heldLocks(): FakeLock[] {
    return this.locks.filter((l) => !l.released);
  }

  /** Emits `PrepareForShutdown(value)` on the live connection. */
  prepareForShutdown(value: boolean): void {
    const live = this.connections.at(-1);
    if (!live || live.isClosed) {
      throw new Error("No live logind connection to signal");
    }
    for (const listener of live.listeners) listener(value);
  }
}

/** One bus connection to the {@linkcode FakeLogind}. */
export class FakeLogindConnection implements ShutdownLogind {
  readonly listeners: ((shuttingDown: boolean) => void)[] = [];
  isClosed = false;
  #close!: () => void;
  readonly closed: Promise<void> = new Promise((r) => this.#close = r);

  constructor(readonly logind: FakeLogind) {}

  inhibitDelayMaxMs(): Promise<number> {
    this.logind.enter("inhibitDelayMaxMs");
    return Promise.resolve(this.logind.inhibitDelayMs);
  }
  reloadLogind(): Promise<void> {
    this.logind.enter("reloadLogind");
    if (this.logind.reloadApplies && this.logind.dropInSeconds !== undefined) {
      this.logind.inhibitDelayMs = this.logind.dropInSeconds * 1000;
    }
    return Promise.resolve();
  }
  inhibitShutdown(): Promise<ShutdownLock> {
    try {
      this.logind.enter("inhibitShutdown");
    } catch (error) {
      return Promise.reject(error);
    }
    return Promise.resolve(this.logind.newLock());
  }
  watchShutdown(listener: (shuttingDown: boolean) => void): Promise<void> {
    this.logind.enter("watchShutdown");
    this.listeners.push(listener);
    return Promise.resolve();
  }
  /** The bus went away (dbus-daemon restarted). */
  drop(): void {
    this.close();
  }
  close(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.#close();
  }
}
