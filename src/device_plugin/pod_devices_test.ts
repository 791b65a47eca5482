import assert from "node:assert/strict";
import { type DeviceEntry, deviceRunOptions } from "./pod_devices.ts";

function entry(
  resource: string,
  response: Partial<NonNullable<DeviceEntry["response"]>>,
): DeviceEntry {
  return {
    podUid: "u",
    containerName: "c",
    resource,
    deviceIds: new Map([[-1, ["d"]]]),
    response: {
      envs: {},
      mounts: [],
      devices: [],
      annotations: {},
      cdiDevices: [],
      ...response,
    },
  };
}

Deno.test("deviceRunOptions: the first resource's value wins, conflicts are named, CDI names once", () => {
  const options = deviceRunOptions([
    entry("a.com/x", {
      envs: { K: "1" },
      mounts: [{ containerPath: "/m", hostPath: "/h1", readOnly: true }],
      devices: [{
        containerPath: "/dev/x",
        hostPath: "/dev/a",
        permissions: "rw",
      }],
      cdiDevices: [{ name: "a.com/x=1" }],
    }),
    entry("b.com/y", {
      envs: { K: "2", L: "3" },
      mounts: [{ containerPath: "/m", hostPath: "/h2", readOnly: false }],
      devices: [{
        containerPath: "/dev/x",
        hostPath: "/dev/b",
        permissions: "r",
      }],
      annotations: { n: "v" },
      cdiDevices: [{ name: "a.com/x=1" }, { name: "b.com/y=2" }],
    }),
  ]);
  assert.deepEqual(options.envs, [{ key: "K", value: "1" }, {
    key: "L",
    value: "3",
  }]);
  assert.deepEqual(options.mounts, [{
    containerPath: "/m",
    hostPath: "/h1",
    readonly: true,
  }]);
  assert.deepEqual(options.devices, [{
    containerPath: "/dev/x",
    hostPath: "/dev/a",
    permissions: "rw",
  }]);
  assert.deepEqual(options.annotations, { n: "v" });
  assert.deepEqual(options.cdiDevices, [{ name: "a.com/x=1" }, {
    name: "b.com/y=2",
  }]);
  assert.deepEqual(options.conflicts, [
    "Environment variable K has conflicting setting: 1 and 2",
    "Container path /m has conflicting mount host paths: /h1 and /h2",
    "Container device /dev/x has conflicting mapping host devices: /dev/a and /dev/b",
  ]);
});
