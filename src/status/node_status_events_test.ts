import assert from "node:assert/strict";
import type { NodeStatus } from "../api/mod.ts";
import {
  nodeRebootMessage,
  nodeStatusEventMessage,
  nodeStatusEventReasons,
} from "./node_status_events.ts";

function status(conds: Record<string, "True" | "False">): NodeStatus {
  return {
    conditions: Object.entries(conds).map(([type, s]) => ({ type, status: s })),
  };
}

const healthy = {
  MemoryPressure: "False",
  DiskPressure: "False",
  PIDPressure: "False",
} as const;

Deno.test("a new node announces its pressure conditions, not Ready", () => {
  assert.deepEqual(
    nodeStatusEventReasons(undefined, status({ ...healthy, Ready: "False" })),
    [
      "NodeHasSufficientMemory",
      "NodeHasNoDiskPressure",
      "NodeHasSufficientPID",
    ],
  );
});

Deno.test("changes record their reason; unchanged conditions record nothing", () => {
  const before = status({ ...healthy, Ready: "False" });
  assert.deepEqual(
    nodeStatusEventReasons(before, status({ ...healthy, Ready: "True" })),
    ["NodeReady"],
  );
  assert.deepEqual(
    nodeStatusEventReasons(
      status({ ...healthy, Ready: "True" }),
      status({ ...healthy, DiskPressure: "True", Ready: "False" }),
    ),
    ["NodeHasDiskPressure", "NodeNotReady"],
  );
  assert.deepEqual(nodeStatusEventReasons(before, before), []);
  assert.equal(
    nodeStatusEventMessage("n1", "NodeReady"),
    "Node n1 status is now: NodeReady",
  );
});

Deno.test("a changed boot ID is a reboot; a first one is not", () => {
  const boot = (bootID: string): NodeStatus => ({
    nodeInfo: {
      machineID: "m",
      systemUUID: "",
      bootID,
      kernelVersion: "",
      osImage: "",
      containerRuntimeVersion: "",
      kubeletVersion: "",
      kubeProxyVersion: "",
      operatingSystem: "linux",
      architecture: "amd64",
    },
  });
  assert.equal(nodeRebootMessage("n1", undefined, boot("b1")), undefined);
  assert.equal(nodeRebootMessage("n1", boot("b1"), boot("b1")), undefined);
  assert.equal(
    nodeRebootMessage("n1", boot("b1"), boot("b2")),
    "Node n1 has been rebooted, boot id: b2",
  );
});
