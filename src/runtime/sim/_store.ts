/**
 * The state of the simulated runtime: sandboxes and containers by id, the
 * names containerd reserves for them, and the rules that change a record's
 * state (a container's own exit, SIGKILL, removal). A running container's
 * exit is computed lazily from `exitAt` whenever it is read (`settle`), so
 * idle containers cost no timer.
 */

import type { Clock } from "../../clock/mod.ts";
import { RuntimeError } from "../errors.ts";
import { lookup, type SimContainer, type SimSandbox } from "./_state.ts";

const UNKNOWN = 2;
/** Exit code of a SIGKILLed process. */
export const KILLED = 137;

/** Sandboxes, containers and name reservations; see the module comment. */
export class SimStore {
  /** Sandboxes by id (tests may read them). */
  readonly sandboxes = new Map<string, SimSandbox>();
  /** Containers by id (tests may read them). */
  readonly containers = new Map<string, SimContainer>();
  readonly #names = new Map<string, string>();
  readonly #clock: Clock;
  #nextIp = 2;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** The next pod IP's host part (2, 3, …). */
  nextIpIndex(): number {
    return this.#nextIp++;
  }

  /** The container's log as CRI-format lines joined by newlines. */
  readLog(containerId: string): string {
    const c = lookup(this.containers, containerId, "container");
    return c.log.map((line) => `${line}\n`).join("");
  }

  /**
   * Reserves `name` for `id` like containerd's name index.
   * @throws RuntimeError (Unknown) when a live sandbox or container holds it
   */
  reserve(name: string, id: string, kind: "sandbox" | "container"): void {
    const owner = this.#names.get(name);
    // A name whose owner vanished (tests may clear the maps to mimic a runtime
    // that lost its state) is free again.
    const alive = owner !== undefined &&
      (this.sandboxes.has(owner) || this.containers.has(owner));
    if (alive) {
      throw new RuntimeError(
        UNKNOWN,
        `failed to reserve ${kind} name "${name}": name "${name}" is reserved for "${owner}"`,
      );
    }
    this.#names.set(name, id);
  }

  /** Frees a reserved name. */
  release(name: string): void {
    this.#names.delete(name);
  }

  /** Applies a container's own exit if its time has come. */
  settle(c: SimContainer): SimContainer {
    if (c.state === "running" && this.#clock.now() >= c.exitAt) {
      this.finish(c, c.exitAt, c.plannedExitCode, c.behavior.oomKilled);
    }
    return c;
  }

  /** Marks a container exited at `at` with `code`. */
  finish(c: SimContainer, at: number, code: number, oom?: boolean): void {
    c.state = "exited";
    c.finishedAt = at;
    c.exitCode = code;
    c.reason = oom ? "OOMKilled" : code === 0 ? "Completed" : "Error";
    c.exitAt = Infinity;
  }

  /** SIGKILL now (exit 137), unless it already exited. */
  kill(c: SimContainer): void {
    this.settle(c);
    if (c.state === "running") this.finish(c, this.#clock.now(), KILLED);
  }

  /** Kills and forgets a container, freeing its name. */
  delete(c: SimContainer): void {
    this.kill(c);
    this.containers.delete(c.id);
    this.#names.delete(c.name);
  }

  /** Forgets a sandbox and its containers, freeing their names. */
  deleteSandbox(sandbox: SimSandbox): void {
    sandbox.state = "notready";
    for (const c of [...this.containers.values()]) {
      if (c.sandboxId === sandbox.id) this.delete(c);
    }
    this.sandboxes.delete(sandbox.id);
    this.#names.delete(sandbox.name);
  }
}
