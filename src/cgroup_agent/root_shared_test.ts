import * as assert from "node:assert/strict";
import { mountHolding, planRootShare, rootShareFix } from "./root_shared.ts";
import { parseMountInfo } from "./volume_tmpfs.ts";

/** A mount table: one `[mount point, optional fields]` per line. */
function table(...mounts: [string, string][]) {
  return parseMountInfo(
    mounts.map(([point, tags], i) =>
      `${20 + i} 1 0:${i} / ${point} rw,relatime ${tags} - ext4 /dev/vda rw`
        .replace("  ", " ")
    ).join("\n"),
  );
}

Deno.test("parseMountInfo() keeps the optional fields (propagation tags)", () => {
  const [shared, none, both] = parseMountInfo([
    "26 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw",
    "27 26 0:24 / /a rw,relatime - tmpfs tmpfs rw",
    "28 26 0:25 / /b rw shared:4 master:2 - tmpfs tmpfs rw",
  ].join("\n"));
  assert.deepEqual(shared!.optionalFields, ["shared:1"]);
  assert.deepEqual(none!.optionalFields, []);
  assert.deepEqual(both!.optionalFields, ["shared:4", "master:2"]);
  assert.equal(both!.mountPoint, "/b");
});

Deno.test("planRootShare() does nothing when the root's mount is shared", () => {
  assert.deepEqual(
    planRootShare(
      table(["/", "shared:1"], ["/var/lib/kubelet/pods/u/v", ""]),
      "/var/lib/kubelet",
    ),
    { action: "nothing", mountPoint: "/" },
  );
  // the root itself already bound and shared (an earlier start)
  assert.deepEqual(
    planRootShare(
      table(["/", ""], ["/var/lib/kubelet", "shared:7"]),
      "/var/lib/kubelet",
    ),
    { action: "nothing", mountPoint: "/var/lib/kubelet" },
  );
});

Deno.test("planRootShare() shares a root on a private or slave mount with nothing below", () => {
  assert.deepEqual(
    planRootShare(table(["/", ""], ["/run", "shared:2"]), "/var/lib/kubelet"),
    { action: "share" },
  );
  assert.deepEqual(
    planRootShare(table(["/", "master:1"]), "/var/lib/kubelet"),
    { action: "share" },
  );
  // the root a private mount point of its own (a disk): the bind goes on top
  assert.deepEqual(
    planRootShare(
      table(["/", "shared:1"], ["/var/lib/kubelet", ""]),
      "/var/lib/kubelet",
    ),
    { action: "share" },
  );
});

Deno.test("planRootShare() refuses while mounts exist below a private root", () => {
  const plan = planRootShare(
    table(
      ["/", ""],
      ["/var/lib/kubelet/pods/u/volumes/kubernetes.io~secret/s", ""],
    ),
    "/var/lib/kubelet",
  );
  assert.equal(plan.action, "refuse");
  assert.match(
    plan.action === "refuse" ? plan.reason : "",
    /"\/var\/lib\/kubelet" is on the private mount "\/".*kubernetes\.io~secret\/s/,
  );
  // below the root only: a mount beside it or at it does not count
  assert.deepEqual(
    planRootShare(
      table(["/", ""], ["/var/lib/kubelet", ""], ["/var/lib/other", ""]),
      "/var/lib/kubelet",
    ),
    { action: "share" },
  );
});

Deno.test("mountHolding() takes the last mount that holds the path", () => {
  // a later mount at the same place covers the earlier one (upstream findMountInfo)
  const entries = table(
    ["/", "shared:1"],
    ["/var/lib/kubelet", "shared:3"],
    ["/var/lib/kubelet", ""],
  );
  assert.equal(mountHolding(entries, "/var/lib/kubelet/pods"), entries[2]);
  assert.equal(
    planRootShare(entries, "/var/lib/kubelet").action,
    "share",
  );
  // the other way round: the shared one is on top
  assert.equal(
    planRootShare(
      table(["/", ""], ["/var/lib/kubelet", ""], [
        "/var/lib/kubelet",
        "shared:3",
      ]),
      "/var/lib/kubelet",
    ).action,
    "nothing",
  );
});

Deno.test("planRootShare() compares paths by whole components, not string prefixes", () => {
  // a shared mount on /var/lib/kube is a string prefix of the root, not its parent
  const prefix = table(["/", ""], ["/var/lib/kube", "shared:5"]);
  assert.equal(mountHolding(prefix, "/var/lib/kubelet")?.mountPoint, "/");
  assert.deepEqual(planRootShare(prefix, "/var/lib/kubelet"), {
    action: "share",
  });
  // a mount below /var/lib/kubelet2 is beside the root, not below it
  const beside = table(["/", ""], ["/var/lib/kubelet2/x", ""]);
  assert.deepEqual(planRootShare(beside, "/var/lib/kubelet"), {
    action: "share",
  });
});

Deno.test("planRootShare() refuses when no mount holds the root", () => {
  assert.equal(
    planRootShare(table(["/srv", ""]), "/var/lib/kubelet").action,
    "refuse",
  );
});

Deno.test("rootShareFix() names the commands for the root", () => {
  assert.match(
    rootShareFix("/r"),
    /mount --bind \/r \/r && mount --make-rshared \/r/,
  );
});
