/**
 * Run by tests/ship/csi_grant_test.ts under exactly the planned permission lists: the plugin
 * watcher's registration pass over `<root>/plugins_registry` with the real gRPC clients (the
 * CSINode write is recorded instead of sent), then a registration call to a socket the lists
 * do not name.
 *
 * Usage: deno run <lists> csi_probe.ts <root-dir> <ungranted-socket>
 * Prints one JSON object: { drivers, entries, denied }.
 * @module
 */
import {
  createCsiNodeClient,
  createPluginWatcher,
  createRegistrationClient,
  driverEntry,
} from "../../../src/csi/mod.ts";
import type { CsiNodeDriver } from "../../../src/api/mod.ts";
import { createLogger } from "../../../src/log/mod.ts";

const [root = "", ungranted = ""] = Deno.args;
const entries: CsiNodeDriver[] = [];
const watcher = createPluginWatcher({
  logger: createLogger({ stderr: () => {} }),
  registration: (socket) => createRegistrationClient(socket),
  csi: (endpoint) => createCsiNodeClient(endpoint),
  install: (name, info) => {
    entries.push(driverEntry(name, info));
    return Promise.resolve();
  },
  uninstall: () => Promise.resolve(),
}, { dir: `${root}/plugins_registry` });
await watcher.reconcile();
let denied = "";
const other = createRegistrationClient(ungranted);
try {
  await other.getInfo();
  denied = "ok";
} catch (error) {
  denied = error instanceof Error ? error.message : String(error);
} finally {
  await other.close();
}
// deno-lint-ignore no-console
console.log(JSON.stringify({ drivers: watcher.names(), entries, denied }));
