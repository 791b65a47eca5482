import assert from "node:assert/strict";
import type { Pod } from "../types.ts";
import { generatePodSandboxConfig } from "./container_config.ts";
import { sandboxHostname } from "./pod_hostname.ts";

function pod(spec: Record<string, unknown>, name = "web"): Pod {
  return {
    metadata: { name, namespace: "ns", uid: "u" },
    spec: { containers: [{ name: "c" }], ...spec },
  } as Pod;
}

Deno.test("sandboxHostname() is the FQDN only with setHostnameAsFQDN and a subdomain", () => {
  assert.equal(sandboxHostname(pod({}), "cluster.local"), "web");
  assert.equal(
    sandboxHostname(pod({ hostname: "h", subdomain: "s" }), "cluster.local"),
    "h",
  );
  assert.equal(
    sandboxHostname(
      pod({ hostname: "h", subdomain: "s", setHostnameAsFQDN: false }),
      "cluster.local",
    ),
    "h",
  );
  assert.equal(
    sandboxHostname(pod({ hostname: "h", setHostnameAsFQDN: true }), "c.l"),
    "h",
  );
  assert.equal(
    sandboxHostname(
      pod({ hostname: "h", subdomain: "s", setHostnameAsFQDN: true }),
      "cluster.local",
    ),
    "h.s.ns.svc.cluster.local",
  );
  assert.equal(
    sandboxHostname(pod({ subdomain: "s", setHostnameAsFQDN: true }), "k8s"),
    "web.s.ns.svc.k8s",
  );
  assert.equal(
    sandboxHostname(
      pod({ hostNetwork: true, subdomain: "s", setHostnameAsFQDN: true }),
      "k8s",
    ),
    "",
  );
});

Deno.test("sandboxHostname() takes 64 bytes and refuses 65 with upstream's message", () => {
  // "<host>.s.ns.svc.k8s" is the host name plus 13 bytes
  const fits = pod({
    hostname: "a".repeat(51),
    subdomain: "s",
    setHostnameAsFQDN: true,
  });
  assert.equal(sandboxHostname(fits, "k8s").length, 64);
  const over = pod({
    hostname: "a".repeat(52),
    subdomain: "s",
    setHostnameAsFQDN: true,
  });
  assert.throws(
    () => sandboxHostname(over, "k8s"),
    {
      name: "RangeError",
      message:
        `failed to construct FQDN from pod hostname and cluster domain, FQDN ${
          "a".repeat(52)
        }.s.ns.svc.k8s is too long (64 characters is the max, 65 characters requested)`,
    },
  );
});

Deno.test("sandboxHostname() cuts a long pod name to 63 characters without a trailing dash", () => {
  const name = `${"x".repeat(62)}-yy`;
  assert.equal(sandboxHostname(pod({}, name), ""), "x".repeat(62));
});

Deno.test("generatePodSandboxConfig() sends the FQDN with the kubelet's cluster domain", () => {
  const config = generatePodSandboxConfig(
    pod({ hostname: "h", subdomain: "s", setHostnameAsFQDN: true }),
    {
      podLogsDir: "/var/log/pods",
      attempt: 0,
      dns: { clusterDomain: "cluster.local" },
    },
  );
  assert.equal(config.hostname, "h.s.ns.svc.cluster.local");
});
