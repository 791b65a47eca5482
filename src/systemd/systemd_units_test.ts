// Talks to the real systemd on the system bus: runs only where systemd is PID 1 with a
// system bus and cgroup v2 (the node VM: scripts/node_vm.sh), and is skipped elsewhere.
import { deepStrictEqual, ok } from "node:assert/strict";
import {
  connectSystemd,
  parseSystemdVersion,
  prop,
  SYSTEM_BUS_SOCKET,
} from "./mod.ts";

function onSystemdV2(): boolean {
  try {
    Deno.statSync("/run/systemd/system");
    Deno.statSync(SYSTEM_BUS_SOCKET);
    Deno.statSync("/sys/fs/cgroup/cgroup.controllers");
    return true;
  } catch {
    return false;
  }
}

Deno.test("parseSystemdVersion() takes the leading number", () => {
  deepStrictEqual(parseSystemdVersion("252.39-1~deb12u1"), 252);
  deepStrictEqual(parseSystemdVersion('"v245.4"'), 245);
  deepStrictEqual(parseSystemdVersion("unknown"), -1);
});

Deno.test({
  name: "connectSystemd() starts, limits and stops a transient slice",
  ignore: !onSystemdV2(),
  async fn() {
    const systemd = await connectSystemd();
    const name = `kts-test-${crypto.randomUUID().slice(0, 8)}.slice`;
    const dir = `/sys/fs/cgroup/${name}`;
    try {
      ok(await systemd.version() >= 200);
      const started = await systemd.startTransientUnit(name, [
        prop.string("Description", "kubelet.ts test slice"),
        prop.strings("Wants", ["-.slice"]),
        prop.bool("MemoryAccounting", true),
        prop.bool("CPUAccounting", true),
        prop.bool("TasksAccounting", true),
        prop.bool("DefaultDependencies", false),
      ]);
      deepStrictEqual(started, true);
      // a second start finds the unit and leaves it
      deepStrictEqual(await systemd.startTransientUnit(name, []), false);
      // systemd makes a slice's directory only once something runs in it; the driver makes
      // it, as libcontainer's Apply does after starting the unit
      await Deno.mkdir(dir, { recursive: true });
      await systemd.setUnitProperties(name, [
        prop.uint64("MemoryMax", 64n * 1024n * 1024n),
        prop.uint64("CPUWeight", 39n),
        prop.uint64("CPUQuotaPerSecUSec", 500_000n),
        prop.uint64("TasksMax", 100n),
      ]);
      // systemd keeps them on the unit (and applies them when it realizes the cgroup)
      const show = new Deno.Command("systemctl", {
        args: [
          "show",
          name,
          "--property=MemoryMax,CPUWeight,CPUQuotaPerSecUSec,TasksMax",
        ],
      }).outputSync();
      deepStrictEqual(
        new TextDecoder().decode(show.stdout).trim().split("\n").sort(),
        [
          "CPUQuotaPerSecUSec=500ms",
          "CPUWeight=39",
          "MemoryMax=67108864",
          "TasksMax=100",
        ],
      );
      await systemd.stopUnit(name);
      // nor does systemd remove a directory it did not make: the driver does (libcontainer too)
      await Deno.remove(dir).catch(() => {});
      // stopping a unit that is gone is fine
      await systemd.stopUnit(name);
    } finally {
      await systemd.stopUnit(name).catch(() => {});
      systemd.close();
    }
  },
});
