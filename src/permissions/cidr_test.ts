import assert from "node:assert/strict";
import {
  formatCidr,
  parseIpv4Cidr,
  podNetworkGrants,
  rangeEnds,
} from "./cidr.ts";
import { PermissionPlanError } from "./errors.ts";
import { planPermissions } from "./plan.ts";

Deno.test("parseIpv4Cidr: clears host bits, rejects non-IPv4 ranges", () => {
  const r = parseIpv4Cidr("10.88.3.7/16");
  assert.ok(r);
  assert.equal(formatCidr(r), "10.88.0.0/16");
  assert.deepEqual(rangeEnds(r), ["10.88.0.0", "10.88.255.255"]);
  assert.deepEqual(rangeEnds(parseIpv4Cidr("192.168.1.9/32")!), [
    "192.168.1.9",
    "192.168.1.9",
  ]);
  for (
    const bad of ["10.88.0.0", "10.256.0.0/16", "10.0.0.0/33", "fd00::/64"]
  ) {
    assert.equal(parseIpv4Cidr(bad), undefined, bad);
  }
});

Deno.test("podNetworkGrants: IPv4 ranges granted, IPv6 left out, garbage refused", () => {
  assert.deepEqual(podNetworkGrants(undefined), []);
  assert.deepEqual(podNetworkGrants(""), []);
  assert.deepEqual(podNetworkGrants("10.244.1.0/24, fd00:10::/64"), [
    "10.244.1.0/24",
  ]);
  assert.throws(
    () => podNetworkGrants("10.244.0.0"),
    (e) => e instanceof PermissionPlanError && e.field === "podCIDR",
  );
  assert.throws(() => podNetworkGrants("pods/16"), PermissionPlanError);
});

Deno.test("planPermissions: podCIDR becomes a net grant for the pod network only", async () => {
  const plan = await planPermissions({
    flags: {},
    config: { containerRuntimeEndpoint: "sim://", podCIDR: "10.88.0.0/16" },
  });
  assert.ok(plan.net.includes("10.88.0.0/16"));
  assert.ok(
    plan.grants.some((g) =>
      g.value === "10.88.0.0/16" && /podCIDR/.test(g.reason)
    ),
  );
  const without = await planPermissions({
    flags: {},
    config: { containerRuntimeEndpoint: "sim://" },
  });
  assert.ok(!without.net.some((n) => n.includes("/")));
});
