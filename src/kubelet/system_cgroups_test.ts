import assert from "node:assert/strict";
import { systemCgroups } from "./system_cgroups.ts";

Deno.test("the configured kubelet, runtime and system cgroups are reported, and the pods' root", () => {
  assert.deepEqual(
    systemCgroups({
      kubeletCgroups: "/kubelet.slice",
      runtimeCgroups: "/system.slice/containerd.service",
      systemCgroups: "/system",
      cgroupDriver: "systemd",
    }),
    [
      { name: "kubelet", cgroup: "/kubelet.slice" },
      { name: "runtime", cgroup: "/system.slice/containerd.service" },
      { name: "misc", cgroup: "/system" },
      { name: "pods", cgroup: "/kubepods.slice" },
    ],
  );
});

Deno.test("unconfigured cgroups are not reported; pods always is", () => {
  assert.deepEqual(systemCgroups({ kubeletCgroups: "", cgroupRoot: "/h9" }), [
    { name: "pods", cgroup: "/h9/kubepods" },
  ]);
});
