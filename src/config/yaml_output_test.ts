import assert from "node:assert/strict";
import {
  decodeKubeletConfiguration,
  defaultFlagsOnlyKubeletConfiguration,
  defaultKubeletConfiguration,
  toKubeletConfigurationYaml,
} from "./mod.ts";

Deno.test("toKubeletConfigurationYaml() round-trips tricky values through the decoder", async () => {
  const c = defaultKubeletConfiguration();
  c.clusterDomain = "true";
  c.providerID = "0";
  c.staticPodURLHeader = { "X-A": ["1", "yes"] };
  c.evictionHard = { "memory.available": "100Mi", "nodefs.available": "10%" };
  c.featureGates = { MemoryQoS: true };
  c.registerWithTaints = [{ key: "k", value: "null", effect: "NoSchedule" }];
  c.systemReserved = { cpu: "100m", memory: "1Gi" };
  const text = await toKubeletConfigurationYaml(c);
  assert.match(text, /^clusterDomain: "true"$/m);
  assert.match(text, /^providerID: "0"$/m);
  assert.deepEqual(await decodeKubeletConfiguration(text), c);
});

Deno.test("toKubeletConfigurationYaml() sorts keys and prints every set field", async () => {
  const text = await toKubeletConfigurationYaml(
    defaultFlagsOnlyKubeletConfiguration(),
  );
  const keys = text.split("\n").filter((l) => /^\w/.test(l)).map((l) =>
    l.split(":")[0]
  );
  assert.deepEqual(keys, [...keys].sort());
  assert.match(text, /^readOnlyPort: 10255$/m);
  assert.match(text, /^ {2}mode: AlwaysAllow$/m);
});
