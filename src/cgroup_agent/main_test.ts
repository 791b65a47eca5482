import * as assert from "node:assert/strict";
import { parseAgentArgs } from "./main.ts";

Deno.test("parseAgentArgs() defaults to the standard root dir and the root cgroup", () => {
  assert.deepEqual(parseAgentArgs([]), {
    socket: "/var/lib/kubelet/cgroup-agent.sock",
    cgroupRoot: "/",
    cgroupDriver: "cgroupfs",
    reservedCgroups: [],
  });
  assert.deepEqual(
    parseAgentArgs([
      "--socket=/x/cgroup-agent.sock",
      "--cgroup-root=/h9",
      "--cgroup-driver=systemd",
      "--reserved-cgroup=/kube",
      "--reserved-cgroup=/system",
    ]),
    {
      socket: "/x/cgroup-agent.sock",
      cgroupRoot: "/h9",
      cgroupDriver: "systemd",
      reservedCgroups: ["/kube", "/system"],
    },
  );
});

Deno.test("parseAgentArgs() names a bad argument and the usage", () => {
  for (
    const bad of [
      "--socket=rel.sock",
      "--reserved-cgroup=kube",
      "--cgroup-driver=both",
      "--all",
    ]
  ) {
    assert.throws(
      () => parseAgentArgs([bad]),
      new RegExp(`"${bad}".*usage: cgroup-agent`),
    );
  }
});
