import assert from "node:assert/strict";
import {
  DBusDisconnectedError,
  DBusError,
  reconnectingSystemd,
  type SystemdUnits,
} from "./mod.ts";

/** A connection whose calls are logged as `<id> <call>`; `gone` makes every call fail as disconnected. */
function fakeUnits(id: number, log: string[], gone = false): SystemdUnits {
  const call = (what: string) => {
    log.push(`${id} ${what}`);
    if (gone) {
      return Promise.reject(new DBusDisconnectedError("connection closed"));
    }
    return Promise.resolve();
  };
  return {
    startTransientUnit: (name) => call(`start ${name}`).then(() => true),
    setUnitProperties: (name) => call(`set ${name}`),
    stopUnit: (name) => call(`stop ${name}`),
    version: () => call("version").then(() => 252),
    close: () => log.push(`${id} close`),
  };
}

Deno.test("reconnectingSystemd() makes a call again on a new connection when the old one is gone", async () => {
  const log: string[] = [];
  let made = 1;
  const units = reconnectingSystemd(
    () => Promise.resolve(fakeUnits(++made, log)),
    fakeUnits(1, log, true),
  );
  await units.stopUnit("a.slice");
  await units.stopUnit("b.slice");
  assert.deepEqual(log, [
    "1 stop a.slice",
    "1 close",
    "2 stop a.slice",
    "2 stop b.slice",
  ]);
});

Deno.test("reconnectingSystemd() does not repeat a call systemd answered with an error", async () => {
  const log: string[] = [];
  let connects = 0;
  const refusing: SystemdUnits = {
    ...fakeUnits(1, log),
    stopUnit: () =>
      Promise.reject(
        new DBusError("org.freedesktop.DBus.Error.AccessDenied", "no"),
      ),
  };
  const units = reconnectingSystemd(() => {
    connects++;
    return Promise.resolve(fakeUnits(2, log));
  }, refusing);
  await assert.rejects(() => units.stopUnit("a.slice"), /AccessDenied/);
  assert.equal(connects, 0);
});

Deno.test("reconnectingSystemd() gives up after one new connection and connects again next time", async () => {
  const log: string[] = [];
  let made = 0;
  const units = reconnectingSystemd(() =>
    Promise.resolve(fakeUnits(++made, log, made <= 2))
  );
  await assert.rejects(() => units.stopUnit("a.slice"), DBusDisconnectedError);
  await units.stopUnit("b.slice");
  assert.deepEqual(log, [
    "1 stop a.slice",
    "1 close",
    "2 stop a.slice",
    "2 close",
    "3 stop b.slice",
  ]);
});
